#include "json.h"

#include <stdlib.h>
#include <string.h>

typedef struct parser {
	const char *s;
	size_t n, off;
	int depth;
} parser;

static void skip_ws(parser *p)
{
	while (p->off < p->n && strchr(" \t\r\n", p->s[p->off]) && p->s[p->off])
		p->off++;
}

static bool lit(parser *p, const char *w)
{
	size_t k = strlen(w);
	if (p->n - p->off < k || memcmp(p->s + p->off, w, k) != 0)
		return false;
	p->off += k;
	return true;
}

static void put_utf8(char **o, unsigned cp)
{
	char *d = *o;
	if (cp < 0x80) {
		*d++ = (char)cp;
	} else if (cp < 0x800) {
		*d++ = (char)(0xC0 | cp >> 6);
		*d++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*d++ = (char)(0xE0 | cp >> 12);
		*d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*d++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*d++ = (char)(0xF0 | cp >> 18);
		*d++ = (char)(0x80 | ((cp >> 12) & 0x3F));
		*d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*d++ = (char)(0x80 | (cp & 0x3F));
	}
	*o = d;
}

static bool hex4(parser *p, unsigned *v)
{
	if (p->n - p->off < 4)
		return false;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->off++];
		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return false;
	}
	return true;
}

static bool parse_string(parser *p, char **out)
{
	if (p->off >= p->n || p->s[p->off] != '"')
		return false;
	p->off++;
	char *buf = malloc(p->n - p->off + 1), *o = buf;
	while (p->off < p->n) {
		unsigned char c = (unsigned char)p->s[p->off++];
		if (c == '"') {
			*o = '\0';
			*out = buf;
			return true;
		}
		if (c < 0x20)
			break; /* raw control characters are not allowed */
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		if (p->off >= p->n)
			break;
		char e = p->s[p->off++];
		const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
		const char *k = strchr(from, e);
		if (e && k) {
			*o++ = to[k - from];
		} else if (e == 'u') {
			unsigned cp;
			if (!hex4(p, &cp))
				break;
			if (cp >= 0xD800 && cp < 0xDC00) {
				unsigned lo;
				if (!lit(p, "\\u") || !hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF)
					break;
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			put_utf8(&o, cp);
		} else {
			break;
		}
	}
	free(buf);
	return false;
}

static bool parse_value(parser *p, json *j);

static bool parse_number(parser *p, json *j)
{
	size_t start = p->off;
	if (p->off < p->n && p->s[p->off] == '-')
		p->off++;
	if (p->off >= p->n || p->s[p->off] < '0' || p->s[p->off] > '9')
		return false;
	if (p->s[p->off] == '0')
		p->off++;
	else
		while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
			p->off++;
	if (p->off < p->n && p->s[p->off] == '.') {
		p->off++;
		size_t d = p->off;
		while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
			p->off++;
		if (d == p->off)
			return false;
	}
	if (p->off < p->n && (p->s[p->off] == 'e' || p->s[p->off] == 'E')) {
		p->off++;
		if (p->off < p->n && (p->s[p->off] == '+' || p->s[p->off] == '-'))
			p->off++;
		size_t d = p->off;
		while (p->off < p->n && p->s[p->off] >= '0' && p->s[p->off] <= '9')
			p->off++;
		if (d == p->off)
			return false;
	}
	char tmp[64];
	size_t k = p->off - start;
	if (k >= sizeof tmp)
		return false;
	memcpy(tmp, p->s + start, k);
	tmp[k] = '\0';
	j->type = J_NUM;
	j->num = strtod(tmp, NULL);
	return true;
}

static bool parse_items(parser *p, json *j, bool object)
{
	char close = object ? '}' : ']';
	size_t cap = 0;
	p->off++;
	skip_ws(p);
	if (p->off < p->n && p->s[p->off] == close) {
		p->off++;
		return true;
	}
	for (;;) {
		if (j->n == cap) {
			cap = cap ? 2 * cap : 8;
			j->items = realloc(j->items, cap * sizeof *j->items);
			if (object)
				j->keys = realloc(j->keys, cap * sizeof *j->keys);
		}
		memset(&j->items[j->n], 0, sizeof j->items[0]);
		skip_ws(p);
		if (object) {
			j->keys[j->n] = NULL;
			if (!parse_string(p, &j->keys[j->n])) {
				j->n++;
				return false;
			}
			skip_ws(p);
			if (!lit(p, ":")) {
				j->n++;
				return false;
			}
		}
		bool ok = parse_value(p, &j->items[j->n]);
		j->n++;
		if (!ok)
			return false;
		skip_ws(p);
		if (lit(p, ","))
			continue;
		return lit(p, object ? "}" : "]");
	}
}

static bool parse_value(parser *p, json *j)
{
	memset(j, 0, sizeof *j);
	skip_ws(p);
	if (p->off >= p->n || ++p->depth > 200)
		return false;
	bool ok;
	char c = p->s[p->off];
	if (c == '{') {
		j->type = J_OBJ;
		ok = parse_items(p, j, true);
	} else if (c == '[') {
		j->type = J_ARR;
		ok = parse_items(p, j, false);
	} else if (c == '"') {
		j->type = J_STR;
		ok = parse_string(p, &j->str);
	} else if (lit(p, "true")) {
		j->type = J_BOOL;
		j->b = true;
		ok = true;
	} else if (lit(p, "false")) {
		j->type = J_BOOL;
		ok = true;
	} else if (lit(p, "null")) {
		j->type = J_NULL;
		ok = true;
	} else {
		ok = parse_number(p, j);
	}
	p->depth--;
	return ok;
}

static void free_inner(json *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free_inner(&j->items[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->items);
	free(j->keys);
	free(j->str);
}

json *json_parse(const char *s, size_t n, size_t *err_off)
{
	parser p = {s, n, 0, 0};
	json *j = calloc(1, sizeof *j);
	bool ok = parse_value(&p, j);
	skip_ws(&p);
	if (!ok || p.off != n) {
		if (err_off)
			*err_off = p.off;
		json_free(j);
		return NULL;
	}
	return j;
}

void json_free(json *j)
{
	if (!j)
		return;
	free_inner(j);
	free(j);
}

const json *json_get(const json *obj, const char *key)
{
	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (obj->keys[i] && strcmp(obj->keys[i], key) == 0)
			return &obj->items[i];
	return NULL;
}

const json *json_at(const json *arr, size_t i)
{
	if (!arr || arr->type != J_ARR || i >= arr->n)
		return NULL;
	return &arr->items[i];
}
