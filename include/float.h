// haloscope shim: <float.h> is <cfloat> (see that shim).
#include <cfloat>
