# defines size(fig), which prints "size WxH": its tight bounding box, padded 0.1 inch, in pixels
def size(f):
    bb = f.get_tightbbox(f.canvas.get_renderer()).padded(0.1)
    print(f'size {round(bb.width * f.dpi)}x{round(bb.height * f.dpi)}')
