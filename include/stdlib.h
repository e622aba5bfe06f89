// haloscope shim: <stdlib.h> is <cstdlib> (see that shim).
#include <cstdlib>
