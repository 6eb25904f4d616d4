#include <stdarg.h>
#include <gd.h>
#include <gd_errors.h>

// libgd reports a broken image on stderr by default; the server answers the client instead.
static void yona_gd_silent(int priority, const char *format, va_list args) { (void)priority; (void)format; (void)args; }
static inline void yona_gd_silence(void) { gdSetErrorMethod(yona_gd_silent); }
static inline int yona_gd_width(gdImagePtr image) { return gdImageSX(image); }
static inline int yona_gd_height(gdImagePtr image) { return gdImageSY(image); }
