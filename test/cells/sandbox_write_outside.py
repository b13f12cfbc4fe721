# writing NAME in /tmp, site-packages and beside the session's directories (after try_oserror)
import os
site = '/usr/lib/python3/dist-packages/'
[try_(lambda: open('/tmp/' + NAME, 'w')),
 try_(lambda: os.mkdir('/tmp/' + NAME)),
 try_(lambda: open(site + NAME + '.py', 'w')),
 try_(lambda: open(site + NAME + '.pth', 'w')),
 try_(lambda: open(os.environ['HOME'] + '/../' + NAME, 'w')),
 try_(lambda: os.mkdir('../' + NAME)),
 try_(lambda: os.rename('../workspace', '../' + NAME)),
 try_(lambda: os.rmdir('../tmp'))]
