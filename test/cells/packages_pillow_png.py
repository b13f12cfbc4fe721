# a red PNG written and read back by Pillow: its size and a pixel
from PIL import Image
Image.new('RGB', (30, 20), 'red').save('red.png')
with Image.open('red.png') as im:
    v = (im.size, im.getpixel((5, 5)))
v
