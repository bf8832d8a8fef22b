// A record's text fields and their JSON keys, listed once for both directions: what is written
// is what is read back, and a field added to the list is added to both.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace kinetic {

template <class T>
struct TextField {
  const char* key;
  std::string T::*member;
};

template <class T, std::size_t N>
using TextFields = std::array<TextField<T>, N>;

// Sets J[KEY] to each field of RECORD.
template <class T, std::size_t N>
void put_text_fields(nlohmann::json& j, const T& record, const TextFields<T, N>& fields) {
  for (const TextField<T>& f : fields) j[f.key] = record.*(f.member);
}

// Sets each field of RECORD to J[KEY], "" when J has none (a type error when it is not text).
template <class T, std::size_t N>
void get_text_fields(const nlohmann::json& j, T& record, const TextFields<T, N>& fields) {
  for (const TextField<T>& f : fields) record.*(f.member) = j.value(f.key, "");
}

}  // namespace kinetic
