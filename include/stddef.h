// haloscope shim: <stddef.h> is <cstddef> (see that shim).
#include <cstddef>
