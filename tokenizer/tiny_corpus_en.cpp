// English prose for the tiny model's tokenizer, written for this project.
#include "tokenizer/tiny_corpus_parts.h"

namespace ps::tiny_corpus {

std::string_view english_prose() {
  return R"EN(Hello! I'm a tiny language model that runs on an ordinary computer.
Who are you? I'm the test model of pagedserve, and my friends call me Paige.
Hi Paige, how are you today? I'm fine, thank you. What would you like to talk about?
Can you help me? Of course. Tell me what you need and I'll do my best.
Good morning! Good evening! Nice to meet you. It's nice to meet you too.
Thanks a lot for your help. You're welcome, just ask if anything else comes up.
What's your favourite book? I don't read books, but I've seen a lot of text about them.
Goodbye, and have a wonderful day! See you next time.

Serving a large language model is mostly a memory problem.
Every layer keeps the keys and values of every token it has already seen, so that the next
token can attend to them without recomputing the whole prompt. This is the KV cache.
The cache grows with the length of each sequence, and with many concurrent requests it quickly
becomes the largest user of memory on the machine.
If the server reserved one contiguous buffer of the maximum length for every request, most of
that memory would sit empty. Paged attention borrows an old idea from operating systems:
split the cache into fixed-size blocks and give every sequence a block table that maps its
logical blocks to physical ones. Blocks need not be adjacent, so fragmentation stays low.
Requests that start with the same system prompt can share the blocks of that prefix.
A shared block carries a reference count; when the last sequence that uses it finishes, the
block becomes cached and can be reused by the next request with the same prefix, or evicted
when memory runs short, least recently used first.
The prefix cache finds blocks by a chained hash: each full block's key combines the key of
the block before it with its own token ids. A hit still compares the tokens, because a hash
collision must never return the wrong keys and values.

Continuous batching is what turns a model into a service.
Static batching waits until every request in a batch is done, so one long answer holds back
all the short ones. A continuous scheduler decides at every step which sequences run: a
finished sequence leaves at once, and a waiting request joins as soon as its blocks fit.
Each running sequence first receives its decode token; the remaining token budget goes to
prefill, oldest request first. A long prompt may be split into chunks over several steps.
When a running sequence cannot get a block for its next token, the newest sequence is
preempted: its blocks are freed and it goes back to the front of the queue to be recomputed.
No request is ever dropped, and every request ends with exactly one finish event.

Sampling happens per sequence. Temperature scales the logits, top-k keeps the k most likely
tokens, top-p keeps the smallest set whose probability reaches p, and min-p drops tokens far
below the best one. Repetition, presence and frequency penalties push the model away from
what it already said. A request with a seed owns its random generator, so its output does not
depend on which other requests happen to share the batch.
Stop conditions are checked after every token: the end-of-sequence token, stop strings, the
maximum number of new tokens, and a minimum before which stopping is not allowed.
A streamed answer must never contain half of a UTF-8 character, nor the beginning of a stop
string that later turns out to match.

User: What is the difference between latency and throughput?
Assistant: Latency is how long one request waits; throughput is how much work the whole
system finishes per second. Batching raises throughput, and a good scheduler keeps latency low.
User: Why is decoding slower than prefill per token?
Assistant: Each decode step produces one token per sequence, so the matrix multiplications are
thin and the time goes into reading weights and cache from memory.
User: Write a haiku about servers.
Assistant: Fans hum through the night / queues drain one token at a time / morning logs are green.
User: How many days are there in a leap year?
Assistant: A leap year has 366 days; February gets a 29th day.
User: Translate "good night" into Chinese.
Assistant: "Good night" is 晚安 in Chinese.
User: Can you count from one to ten?
Assistant: One, two, three, four, five, six, seven, eight, nine, ten.

The café on the corner serves crème brûlée, a smooth piña colada and a very strong espresso.
Zoë and Björn met in São Paulo, then travelled through Ærø, Kraków, Reykjavík and Mâcon.
The naïve façade of the old théâtre hides a modern stage; the résumé of its director is long.
In Zürich the über-efficient trams run on time; in Málaga the señora sells jamón and olives.
Ça va? Très bien, merci. ¿Dónde está la estación? Está a dos cuadras, a la derecha.
Grüße aus Köln! Die Straße ist schön, aber die Brötchen sind heute schon ausverkauft.

Benchmarks should compare ratios measured in one run rather than absolute times, because the
machines differ and other jobs share them. Time to first token, time per output token,
inter-token latency and end-to-end latency tell different stories about the same server.
When the queue is full, the server answers 429 or 503 with a Retry-After header instead of
hanging, and a client that disconnects in the middle of a stream cancels its request.
Errors a client can cause come back as clear messages that say what to fix.
)EN";
}

}  // namespace ps::tiny_corpus
