// libxml2: its streaming reader (XMLTextReader.swift) parses the Atom feeds of RHEx servers, FHIR XML
// and XML applet plists, its SAX2 push parser Apple Health exports (both through xmlreader.h), rather
// than Foundation's XMLParser, which crashes on Linux on DTD attribute declarations, or its
// PropertyListSerialization, which leaks on bad files. XMLPolicy.swift holds the options they share.
#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU, and its encoding.h then includes the system's ICU headers,
// which clash with the ICU module Foundation carries. hreader never touches the encoding handler
// struct whose layout this changes; it uses the reader API through pointers only.
#undef LIBXML_ICU_ENABLED
#include <libxml/xmlreader.h>
