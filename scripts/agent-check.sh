#!/usr/bin/env bash
# Points the coding agents users run at a running pagedserve server, one prompt each:
#   Codex CLI   `codex exec`, a custom provider with wire_api = "responses" (POST /v1/responses)
#   Claude Code `claude -p`, ANTHROPIC_BASE_URL at the server (POST /v1/messages)
# Both are installed from npm into ~/.cache/pagedserve/agents the first time (network needed).
# Their first request carries their whole system prompt and tool list (Codex 0.171: 14129
# tokens of the tiny model's tokenizer; Claude Code 2.1.197: 32439), so a model with a context
# of that size or more is what completes a turn; against the shipped tiny model (512 tokens)
# each run ends with the server's context-length error, which shows the request got through
# translation, tools and grammar to the model.
#
#   scripts/agent-check.sh http://127.0.0.1:8000 MODEL_NAME ["the prompt"]
set -euo pipefail
URL=${1:?usage: $0 URL MODEL [PROMPT]}
MODEL=${2:?usage: $0 URL MODEL [PROMPT]}
PROMPT=${3:-"Run the shell command: echo hello"}
CACHE=${PAGEDSERVE_AGENT_CACHE:-$HOME/.cache/pagedserve/agents}
mkdir -p "$CACHE"
if [[ ! -x "$CACHE/node_modules/.bin/codex" || ! -x "$CACHE/node_modules/.bin/claude" ]]; then
  npm install --prefix "$CACHE" --no-save @openai/codex @anthropic-ai/claude-code >&2
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Codex: its own home with one provider; web search off (a built-in tool this server refuses).
mkdir -p "$WORK/codex-home" "$WORK/repo"
cat >"$WORK/codex-home/config.toml" <<EOF
model = "$MODEL"
model_provider = "pagedserve"
web_search = "disabled"

[model_providers.pagedserve]
name = "pagedserve"
base_url = "$URL/v1"
wire_api = "responses"
EOF
echo "== codex exec ($("$CACHE/node_modules/.bin/codex" --version))"
(cd "$WORK/repo" && CODEX_HOME="$WORK/codex-home" timeout 600 \
  "$CACHE/node_modules/.bin/codex" exec --skip-git-repo-check "$PROMPT" </dev/null) || true

echo "== claude -p ($("$CACHE/node_modules/.bin/claude" --version))"
(cd "$WORK/repo" && HOME="$WORK/claude-home" ANTHROPIC_BASE_URL="$URL" \
  ANTHROPIC_API_KEY="${PAGEDSERVE_API_KEY:-unused}" timeout 600 \
  "$CACHE/node_modules/.bin/claude" -p "$PROMPT" --model "$MODEL" </dev/null) || true
