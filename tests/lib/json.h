/* A small strict JSON parser for the tests (RFC 8259 grammar; numbers as
 * double). It exists so the suite can check that the dump is valid JSON and
 * read numbers back out of it without Python. */
#ifndef ATTNVIEW_TESTS_JSON_H
#define ATTNVIEW_TESTS_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } json_type;

typedef struct json {
	json_type type;
	bool b;
	double num;
	char *str;	    /* J_STR (decoded UTF-8) */
	size_t n;	    /* J_ARR, J_OBJ: number of items */
	struct json *items; /* J_ARR, J_OBJ */
	char **keys;	    /* J_OBJ */
} json;

/* Parse the whole text; on failure returns NULL and sets *err_off. */
json *json_parse(const char *s, size_t n, size_t *err_off);
void json_free(json *j);
const json *json_get(const json *obj, const char *key); /* NULL if absent */
const json *json_at(const json *arr, size_t i);		  /* NULL if out of range */

#endif
