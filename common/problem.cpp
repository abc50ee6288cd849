#include "problem.hpp"

namespace course {

namespace {
struct TypeInfo {
  ElemType type;
  const char* name;
  std::size_t size;
  bool is_float;
};
const TypeInfo kTypes[] = {
    {ElemType::f32, "f32", 4, true},  {ElemType::f64, "f64", 8, true},
    {ElemType::f16, "f16", 2, true},  {ElemType::bf16, "bf16", 2, true},
    {ElemType::i8, "i8", 1, false},   {ElemType::b128, "b128", 16, false},
};
const TypeInfo& info(ElemType t) { return kTypes[static_cast<int>(t)]; }
}  // namespace

std::size_t elem_size(ElemType t) { return info(t).size; }
const char* elem_name(ElemType t) { return info(t).name; }
bool elem_is_float(ElemType t) { return info(t).is_float; }

bool parse_elem_type(const std::string& name, ElemType* out) {
  for (const TypeInfo& i : kTypes) {
    if (name == i.name) {
      *out = i.type;
      return true;
    }
  }
  return false;
}

const std::vector<ElemType>& all_elem_types() {
  static const std::vector<ElemType> types = [] {
    std::vector<ElemType> all;
    for (const TypeInfo& i : kTypes) all.push_back(i.type);
    return all;
  }();
  return types;
}

std::string Problem::describe() const {
  std::string s = std::to_string(rows) + " x " + std::to_string(cols) + " " + elem_name(type);
  if (batch != 1) s += ", batch " + std::to_string(batch);
  return s;
}

}  // namespace course
