// haloscope shim: <assert.h> is <cassert> (see that shim).
#include <cassert>
