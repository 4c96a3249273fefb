// libxml2's streaming reader: the Atom feeds of RHEx servers (and Apple Health exports) are parsed
// with it rather than Foundation's XMLParser, which crashes on Linux on DTD attribute declarations.
#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU, and its encoding.h then includes the system's ICU headers,
// which clash with the ICU module Foundation carries. hreader never touches the encoding handler
// struct whose layout this changes; it uses the reader API through pointers only.
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlreader.h>
