# a .pth file named TAG, a comment only, made in every site directory that lets it
import site
errors, made = [], []
for d in site.getsitepackages():
    try:
        with open(f'{d}/{TAG}.pth', 'x') as f:
            f.write('# codeinterp attack test\n')
        made.append(d)
    except OSError as e:
        errors.append(e)
if not made:
    raise errors[0]
made
