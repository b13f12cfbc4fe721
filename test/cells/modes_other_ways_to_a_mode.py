# O_TMPFILE, O_PATH, archives and a hard link to su: the modes they leave (after try_oserror)
import io, os, tarfile, zipfile
os.mkdir('other')
fd = os.open('other', os.O_TMPFILE | os.O_RDWR, 0o777)
# linkat, AT_SYMLINK_FOLLOW
sc(SYS_LINKAT, -100, f'/proc/self/fd/{fd}'.encode(), -100, b'other/tmpfile', 0x400)
p = os.open('other/tmpfile', os.O_PATH)
b = io.BytesIO()
with tarfile.open(fileobj=b, mode='w') as t:
    m = tarfile.TarInfo('suid'); m.mode = 0o6777; m.size = 1
    t.addfile(m, io.BytesIO(b'x'))
    m = tarfile.TarInfo('sticky'); m.type = tarfile.DIRTYPE; m.mode = 0o1777
    t.addfile(m)
b.seek(0)
tarfile.open(fileobj=b).extractall('other/tar')
z = io.BytesIO()
with zipfile.ZipFile(z, 'w') as f:
    m = zipfile.ZipInfo('suid'); m.external_attr = 0o104777 << 16
    f.writestr(m, 'x')
zipfile.ZipFile(z).extractall('other/zip')
[try_(lambda: os.chmod(f'/proc/self/fd/{p}', 0o755)),
 try_(lambda: sc(SYS_FCHMOD, p, 0o4700)),  # fchmod of O_PATH
 try_(lambda: os.link('/usr/bin/su', 'other/su')),
 [oct(os.stat(f).st_mode & 0o7777) for f in
  ('other/tmpfile', 'other/tar/suid', 'other/tar/sticky', 'other/zip/suid')]]
