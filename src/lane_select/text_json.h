/**
 * @file text_json.h
 * The JSON value writers of every JSON protosel prints (psel_info -j's
 * tables, resources and configuration): strings escaped, numbers in the C
 * locale whatever LC_NUMERIC the application set (text_scan.h), sizes with
 * SIZE_MAX as "inf". Internal header: not installed.
 */
#ifndef PSEL_LANE_SELECT_TEXT_JSON_H_
#define PSEL_LANE_SELECT_TEXT_JSON_H_

#include <stddef.h>
#include <stdio.h>

/** Print @a str as a JSON string: quoted, '"', '\' and control characters
 *  escaped. */
void psel_json_string(FILE *stream, const char *str);

/** Print @a value with 17 significant digits ('.' in every locale), or
 *  null if it is not finite. */
void psel_json_number(FILE *stream, double value);

/** Print @a size as a JSON number, or "inf" (a string) for SIZE_MAX. */
void psel_json_size(FILE *stream, size_t size);

#endif
