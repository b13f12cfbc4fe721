import numpy
(numpy.__file__, hasattr(numpy, 'SHADOW'))
