// haloscope shim: <string.h> is <cstring> (see that shim).
#include <cstring>
