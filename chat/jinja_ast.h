#pragma once
// The parsed template: expressions and statements, each carrying its position for errors.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace ps::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Type {
    kLiteral,    // value
    kName,       // name
    kList,       // children
    kTuple,      // children
    kDict,       // children: key, value, key, value, ...
    kAttribute,  // children[0] . name
    kSubscript,  // children[0] [ children[1] ]
    kSlice,      // children[0] [ children[1] : children[2] : children[3] ] (null = omitted)
    kCall,       // children[0] ( children[1..] , keyword )
    kFilter,     // children[0] | name ( children[1..], keyword )
    kTest,       // children[0] is [not] name ( children[1..], keyword )
    kUnary,      // name in {"-", "+", "not"} children[0]
    kBinary,  // children[0] name children[1]: + - * / // % ** ~ and or == != < > <= >= in "not in"
    kCondition,  // children[1] if children[0] else children[2] (children[2] may be null)
  };
  Type type;
  int line = 0;
  int column = 0;
  std::string name;
  Value value;
  bool negated = false;
  std::vector<ExprPtr> children;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null when required
};

struct Stmt {
  enum class Type {
    kText,         // text
    kOutput,       // {{ expr }}
    kIf,           // conditions[i] -> bodies[i]; else_body
    kFor,          // targets in expr [if condition] body [else else_body]
    kSet,          // targets = expr, or target_object.attribute = expr
    kSetBlock,     // {% set target %}body{% endset %} [| filters via expr on a placeholder]
    kMacro,        // name(params) body
    kCallBlock,    // {% call(params) expr %}body{% endcall %}
    kFilterBlock,  // {% filter expr %}body{% endfilter %}
    kBreak,
    kContinue,
    kScope,  // a body rendered as is ({% generation %} from transformers)
  };
  Type type;
  int line = 0;
  int column = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  Body body;
  Body else_body;
  std::vector<std::string> targets;
  std::string target_object;  // `ns` in `set ns.attr = ...`
  std::string attribute;
  std::string name;
  std::vector<MacroParam> params;
};

}  // namespace ps::jinja
