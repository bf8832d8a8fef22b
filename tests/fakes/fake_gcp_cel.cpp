// FakeGcp: the subset of CEL that IAM conditions on a GKE cluster need (docs/fakes.md), evaluated
// against one resource. kinetic's auto-down grant names a single cluster by
// `resource.name == "..."`; the rest of the subset is what such a grant is commonly written with.
// Anything outside it (request.time, timestamps, functions other than startsWith/endsWith,
// numbers, lists, `in`, macros) makes the whole expression evaluate to nothing, which the caller
// treats as false: a grant the fake cannot read never allows more than intended.
#include <cctype>
#include <optional>
#include <string>
#include <variant>

#include "fakes/fake_gcp_internal.h"

namespace kinetic::fakes::gcp_detail {

namespace {

using Value = std::variant<bool, std::string>;

// Recursive descent straight to values: the expressions are a line long and evaluated once.
//   or      := and ('||' and)*
//   and     := unary ('&&' unary)*
//   unary   := '!' unary | compare
//   compare := primary (('==' | '!=') primary)?
//   primary := '(' or ')' | STRING | 'true' | 'false'
//            | 'resource' '.' ('name' | 'type' | 'service') ('.' ('startsWith' | 'endsWith') '(' or
//            ')')?
// A failure anywhere (syntax, a type mismatch, an unknown name) sets ok = false.
class Parser {
 public:
  Parser(const std::string& text, const CelResource& resource) : s_(text), r_(resource) {}

  std::optional<bool> run() {
    Value v = parse_or();
    skip_space();
    if (!ok_ || pos_ != s_.size() || !std::holds_alternative<bool>(v)) return std::nullopt;
    return std::get<bool>(v);
  }

 private:
  const std::string& s_;
  const CelResource& r_;
  std::size_t pos_ = 0;
  bool ok_ = true;

  Value fail() {
    ok_ = false;
    return false;
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view token) {
    skip_space();
    if (s_.compare(pos_, token.size(), token) != 0) return false;
    pos_ += token.size();
    return true;
  }
  std::string identifier() {
    skip_space();
    std::size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }
  bool as_bool(const Value& v, bool& out) {
    if (!std::holds_alternative<bool>(v)) return false;
    out = std::get<bool>(v);
    return true;
  }

  Value parse_or() {
    Value left = parse_and();
    while (ok_ && eat("||")) {
      Value right = parse_and();
      bool a = false, b = false;
      if (!as_bool(left, a) || !as_bool(right, b)) return fail();
      left = a || b;
    }
    return left;
  }

  Value parse_and() {
    Value left = parse_unary();
    while (ok_ && eat("&&")) {
      Value right = parse_unary();
      bool a = false, b = false;
      if (!as_bool(left, a) || !as_bool(right, b)) return fail();
      left = a && b;
    }
    return left;
  }

  Value parse_unary() {
    skip_space();
    // '!' but not the '!=' of a comparison (which cannot start an operand anyway).
    if (pos_ < s_.size() && s_[pos_] == '!' && (pos_ + 1 >= s_.size() || s_[pos_ + 1] != '=')) {
      ++pos_;
      bool v = false;
      if (!as_bool(parse_unary(), v)) return fail();
      return !v;
    }
    return parse_compare();
  }

  Value parse_compare() {
    Value left = parse_primary();
    if (!ok_) return false;
    bool equal = false;
    if (eat("=="))
      equal = true;
    else if (!eat("!="))
      return left;
    Value right = parse_primary();
    if (!ok_ || left.index() != right.index()) return fail();  // CEL has no implicit conversions
    return equal == (left == right);
  }

  Value parse_primary() {
    skip_space();
    if (pos_ >= s_.size()) return fail();
    char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      Value v = parse_or();
      if (!eat(")")) return fail();
      return v;
    }
    if (c == '"' || c == '\'') return parse_string();
    std::string word = identifier();
    if (word == "true") return true;
    if (word == "false") return false;
    if (word != "resource" || !eat(".")) return fail();
    std::string attribute = identifier();
    std::string value;
    if (attribute == "name")
      value = r_.name;
    else if (attribute == "type")
      value = r_.type;
    else if (attribute == "service")
      value = r_.service;
    else
      return fail();
    if (!eat(".")) return value;
    std::string method = identifier();
    if ((method != "startsWith" && method != "endsWith") || !eat("(")) return fail();
    Value arg = parse_or();
    if (!ok_ || !eat(")") || !std::holds_alternative<std::string>(arg)) return fail();
    const auto& a = std::get<std::string>(arg);
    if (a.size() > value.size()) return false;
    if (method == "startsWith") return value.compare(0, a.size(), a) == 0;
    return value.compare(value.size() - a.size(), a.size(), a) == 0;
  }

  // A quoted literal with the escapes a resource name could need (\\, \", \'); raw, triple-quoted
  // and byte strings are outside the subset.
  Value parse_string() {
    char quote = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      char c = s_[pos_++];
      if (c == '\n') return fail();
      if (c == '\\') {
        if (pos_ >= s_.size()) return fail();
        char e = s_[pos_++];
        if (e != '\\' && e != '"' && e != '\'') return fail();
        c = e;
      }
      out.push_back(c);
    }
    if (pos_ >= s_.size()) return fail();
    ++pos_;
    return out;
  }
};

}  // namespace

std::optional<bool> evaluate_condition(const std::string& expression, const CelResource& resource) {
  return Parser(expression, resource).run();
}

}  // namespace kinetic::fakes::gcp_detail
