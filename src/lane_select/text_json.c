/*
 * JSON value writers (text_json.h).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "text_json.h"
#include "text_scan.h"

#include <math.h>
#include <stdint.h>

void psel_json_string(FILE *stream, const char *str)
{
    const unsigned char *c;

    fputc('"', stream);
    for (c = (const unsigned char*)str; *c != '\0'; ++c) {
        if ((*c == '"') || (*c == '\\')) {
            fputc('\\', stream);
            fputc(*c, stream);
        } else if (*c < 0x20) {
            fprintf(stream, "\\u%04x", *c);
        } else {
            fputc(*c, stream);
        }
    }
    fputc('"', stream);
}

void psel_json_number(FILE *stream, double value)
{
    if (isfinite(value)) {
        psel_text_fprintf(stream, "%.17g", value);
    } else {
        fputs("null", stream);
    }
}

void psel_json_size(FILE *stream, size_t size)
{
    if (size == SIZE_MAX) {
        fputs("\"inf\"", stream);
    } else {
        fprintf(stream, "%zu", size);
    }
}
