package llm

import "strings"

// exhaustedCodes are provider codes and types (lowercase, without "_", "-"
// and ".") for a quota, balance or account state that waiting never fixes,
// whatever status carries them (often 429):
//   - OpenAI insufficient_quota (in any spelling: InsufficientQuota) and
//     billing_hard_limit_reached;
//   - Moonshot exceeded_current_quota_error (a suspended account, 429);
//   - Alibaba DashScope Arrearage; Volcengine Ark AccountOverdueError;
//   - Zhipu BigModel 1110 inactive, 1112 locked and 1113 unpaid account,
//     1304 the day's call limit reached (all sent as 429).
var exhaustedCodes = []string{
	"insufficientquota", "billinghardlimitreached", "exceededcurrentquotaerror",
	"arrearage", "accountoverdueerror",
	"1110", "1112", "1113", "1304",
}

// exhaustedWords are message wordings of the same states. OpenAI's "exceeded
// your current quota" is fatal only when no per-second or per-minute window
// is named (shortQuota: Gemini reuses the sentence for its minute limits).
var exhaustedWords = []string{
	"insufficient balance", "insufficient_balance", "balance is insufficient",
	"insufficient credits", "credit balance is too low", // OpenRouter, Anthropic
	"used all available credits", "monthly spending limit", // xAI
	"please recharge", "余额不足", "欠费", "请充值", // Zhipu, Chinese gateways
	"requires more system memory", // Ollama: the model does not fit, a 500
	// OpenRouter's daily cap on free models, a 429 "Rate limit exceeded:
	// free-models-per-day" that lasts until midnight UTC
	// (openclaw/openclaw#147546); free-models-per-min passes.
	"free-models-per-day",
}

// isExhausted reports whether an error says a quota, balance or resource is
// used up for good, so retrying cannot help (README rule 1, round 3 rule on
// provider codes inside a 429).
func isExhausted(code, typ, msg string, shortQuota bool) bool {
	for _, s := range []string{code, typ} {
		n := strings.NewReplacer("_", "", "-", "", ".", "").Replace(s)
		for _, c := range exhaustedCodes {
			if n == c {
				return true
			}
		}
	}
	if strings.Contains(msg, "exceeded your current quota") && !shortQuota {
		return true
	}
	for _, w := range exhaustedWords {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}
