// haloscope shim: <math.h> is <cmath> (see that shim).
#include <cmath>
