// bench:schema-coverage helper (bench/json-schema-coverage.ts builds it; not part of svc): llama.cpp's
// own json_schema_to_grammar (common/json-schema-to-grammar.cpp, from the llama.cpp release that
// node-llama-cpp ships) as a line-oriented CLI, so the bench compares svc with the converter itself.
// stdin: one JSON schema per line. stdout: one JSON line per schema:
// {"ok":true,"grammar":"…","us":N} or {"ok":false,"error":"…","us":N}; us: conversion time in microseconds.
// The few common.cpp string helpers the converter uses are defined here, so nothing else of
// llama.cpp is linked.
#include "json-schema-to-grammar.h"
#include "common.h"
#include <chrono>
#include <cstdarg>
#include <iostream>
#include <string>
#include <vector>

std::string string_format(const char * fmt, ...) {
    va_list ap; va_start(ap, fmt);
    va_list ap2; va_copy(ap2, ap);
    int size = vsnprintf(nullptr, 0, fmt, ap);
    std::vector<char> buf(size + 1);
    vsnprintf(buf.data(), size + 1, fmt, ap2);
    va_end(ap2); va_end(ap);
    return std::string(buf.data(), size);
}
std::string string_join(const std::vector<std::string> & values, const std::string & sep) {
    std::string out;
    for (size_t i = 0; i < values.size(); i++) { if (i) out += sep; out += values[i]; }
    return out;
}
std::vector<std::string> string_split(const std::string & str, const std::string & delim) {
    std::vector<std::string> parts; size_t start = 0, end;
    while ((end = str.find(delim, start)) != std::string::npos) { parts.push_back(str.substr(start, end - start)); start = end + delim.size(); }
    parts.push_back(str.substr(start));
    return parts;
}
std::string string_repeat(const std::string & str, size_t n) {
    std::string out; out.reserve(str.size() * n);
    for (size_t i = 0; i < n; i++) out += str;
    return out;
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        common_json out = common_json::object();
        auto t0 = std::chrono::steady_clock::now();
        try {
            common_json schema = common_json::parse(line);
            std::string grammar = json_schema_to_grammar(schema, true);
            auto t1 = std::chrono::steady_clock::now();
            out["ok"] = true;
            out["grammar"] = grammar;
            out["us"] = (int64_t) std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count();
        } catch (const std::exception & e) {
            auto t1 = std::chrono::steady_clock::now();
            out["ok"] = false;
            out["error"] = std::string(e.what());
            out["us"] = (int64_t) std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count();
        }
        std::cout << out.dump_safe() << "\n" << std::flush;
    }
}
extern "C" void ggml_abort(const char * file, int line, const char * fmt, ...) {
    fprintf(stderr, "abort at %s:%d\n", file, line); abort();
}
