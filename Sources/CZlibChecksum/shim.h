// zlib's crc32 (vectorised): ZIPFoundation checks a member's CRC with its own table-driven Swift loop
// on Linux, about a tenth of an Apple Health import; ExportSource asks it to skip that and checks
// the CRC itself with this one. (ZIPFoundation's own zlib module is not a product we can import.)
#include <zlib.h>
