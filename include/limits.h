// haloscope shim: <limits.h> is <climits> (see that shim).
#include <climits>
