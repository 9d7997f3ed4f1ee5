// One name table per enum: `enum_name(value, table)` and `enum_from_name(text, table, what)` look a
// value up in a single static array of {value, name} pairs, so the spelling of an enum lives in one
// place and to/from-string can never disagree. An entry may carry a `label` beside its parse
// name, for enums whose reports spell a value differently from its option ("jacobi" parses,
// "eigen-jacobi" is reported): `enum_label`. CPU only; header only.
#pragma once
#include <cstddef>
#include <string>

#include "attnspec/base/errors.hpp"

namespace attnspec {

template <class E>
struct EnumName {
    E value;
    const char* name;             // the spelling enum_from_name accepts
    const char* label = nullptr;  // the spelling reports use; nullptr: the same as name
};

// The name of `v`, or "?" when the table lacks it (a bug: every enumerator belongs in its table).
template <class E, std::size_t N>
const char* enum_name(E v, const EnumName<E> (&table)[N]) {
    for (const auto& e : table)
        if (e.value == v) return e.name;
    return "?";
}

// The report label of `v` (its name when the entry has no label), or "?" like enum_name.
template <class E, std::size_t N>
const char* enum_label(E v, const EnumName<E> (&table)[N]) {
    for (const auto& e : table)
        if (e.value == v) return e.label ? e.label : e.name;
    return "?";
}

// The value named `text`; throws Error(code) "unknown <what> 'text' (expected a, b or c)",
// naming `parameter` (Error::parameter) so a command can point at its own option.
template <class E, std::size_t N>
E enum_from_name(const std::string& text, const EnumName<E> (&table)[N], const std::string& what,
                 const std::string& parameter = "", ExitCode code = ExitCode::Usage) {
    for (const auto& e : table)
        if (text == e.name) return e.value;
    std::string expected;
    for (std::size_t i = 0; i < N; ++i)
        expected += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(table[i].name);
    throw Error(code, "unknown " + what + " '" + text + "' (expected " + expected + ")", parameter);
}

}  // namespace attnspec
