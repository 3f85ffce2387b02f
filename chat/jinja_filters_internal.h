#pragma once
// What jinja_filters.cpp's filter table shares with the files that add filters to it. Internal
// to chat/: the filters are reached through apply_filter() (jinja_render.h).
#include <functional>
#include <map>
#include <string>

#include "chat/jinja_render.h"

namespace ps::jinja {

using Filter = std::function<Value(Renderer&, const Value&, const CallArgs&)>;

// The filters over sequences and mappings (jinja_list_filters.cpp): join, first, last, list,
// items, dictsort, map, select/reject(attr), reverse, sort, unique, max, min, sum.
void add_list_filters(std::map<std::string, Filter>& t);

}  // namespace ps::jinja
