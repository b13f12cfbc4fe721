# file work in the workspace and TMPDIR and between them, sqlite, tempfile
import os, shutil, sqlite3, tempfile
res = []
for d in ('.', os.environ['TMPDIR']):
    os.makedirs(d + '/sb_dir/sub')
    with open(d + '/sb_dir/sub/f', 'w') as f:
        f.write('hello world')
    os.truncate(d + '/sb_dir/sub/f', 5)
    with open(d + '/sb_dir/sub/f', 'r+') as f:
        f.truncate(4)
    res.append(open(d + '/sb_dir/sub/f').read())
    os.rename(d + '/sb_dir/sub/f', d + '/sb_dir/g')
    os.link(d + '/sb_dir/g', d + '/sb_dir/h')
    os.remove(d + '/sb_dir/h')
    os.rmdir(d + '/sb_dir/sub')
os.replace('sb_dir/g', os.environ['TMPDIR'] + '/from_ws')
os.replace(os.environ['TMPDIR'] + '/sb_dir/g', 'from_tmp')
res.append(open(os.environ['TMPDIR'] + '/from_ws').read() + open('from_tmp').read())
with tempfile.TemporaryDirectory() as t:
    open(t + '/x', 'w').write('x')
    res.append(os.listdir(t))
con = sqlite3.connect('sb.sqlite')
con.execute('create table t(x)'); con.execute('insert into t values (7)'); con.commit()
res.append(con.execute('select x from t').fetchone()[0]); con.close()
for p in ('sb.sqlite', 'from_tmp', os.environ['TMPDIR'] + '/from_ws'):
    os.remove(p)
for d in ('.', os.environ['TMPDIR']):
    shutil.rmtree(d + '/sb_dir')
res, [n for n in os.listdir('.') + os.listdir(os.environ['TMPDIR'])
      if n.startswith(('sb', 'from_'))]
