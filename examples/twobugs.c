/* Example 5: an order ledger with two independent bugs, the planted-bug corpus of sampler-analyze's tests
 * (tests/analysis/planted_bugs_test.sh): many runs, each crashing or not, and both causes must come out on top of
 * their own round of iterative elimination.
 *
 *   sampler-example-twobugs SEED    processes 3000 made-up orders drawn from SEED, prints a summary
 *
 * Bug 1 (seeds that are multiples of 5): some orders have a negative quantity. ledger_add() drops them, but
 * first resets the running summary to NULL (the branch site `negative_quantity`), meaning to start a new one that
 * it never does; summarize() then follows that NULL pointer: SIGSEGV.
 * Bug 2 (seeds of the form 7k + 3): some customers' names are longer than NAME_CAPACITY; ledger_add() cuts them
 * and marks them cut (the branch site `long_name`), and check_names() later takes the mark for corruption: SIGABRT.
 * The other sites observe things that have nothing to do with either crash. Each cause is true in about a quarter
 * of the orders of its runs, so that sampling one site execution in 100 sees it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sampler/sampler.h>

#define SAMPLER_UNIT_SIGNATURE "5d0c1b2a39485766a5b4c3d2e1f00f1e"
#define TWOBUGS_SITES(SCHEME, SITE, BOUND, END)                                                                        \
  SCHEME(function_entries, none)                                                                                       \
    SITE(ledger_add_entry, "twobugs.c", "75", "ledger_add", "0")                                                       \
    SITE(summarize_entry, "twobugs.c", "105", "summarize", "0")                                                        \
  END(function_entries)                                                                                                \
  SCHEME(branches, none)                                                                                               \
    SITE(negative_quantity, "twobugs.c", "78", "ledger_add", "1", "quantity < 0")                                      \
    SITE(long_name, "twobugs.c", "83", "ledger_add", "2", "name_length > NAME_CAPACITY")                               \
    SITE(even_price, "twobugs.c", "89", "ledger_add", "3", "price % 2 == 0")                                           \
    SITE(large_price, "twobugs.c", "90", "ledger_add", "4", "price > 500")                                             \
    SITE(regular, "twobugs.c", "91", "ledger_add", "5", "customer % 3 == 0")                                           \
  END(branches)                                                                                                        \
  SCHEME(returns, none)                                                                                                \
    SITE(compared, "twobugs.c", "94", "ledger_add", "6", "compare_prices")                                             \
  END(returns)                                                                                                         \
  SCHEME(scalar_pairs, none)                                                                                           \
    SITE(price_vs_limit, "twobugs.c", "88", "ledger_add", "7", "price", "local", "direct", "limit", "local")           \
  END(scalar_pairs)
SAMPLER_DEFINE_UNIT(TWOBUGS_SITES);

#define ORDERS 3000
#define NAME_CAPACITY 24

struct order {
  int quantity;
  unsigned price;
  char name[NAME_CAPACITY + 1];
  int name_cut; /* the name was longer than NAME_CAPACITY and lost its end */
};

static struct order orders[ORDERS];
struct summary {
  long total;
  const struct order* last;
};
static struct summary summary_storage;
static struct summary* summary = &summary_storage;
static int count;

static uint64_t random_state;

/* xorshift64*. */
static unsigned next_random(unsigned below) {
  random_state ^= random_state >> 12;
  random_state ^= random_state << 25;
  random_state ^= random_state >> 27;
  return (unsigned)((random_state * 2685821657736338717ull) >> 33) % below;
}

static int compare_prices(unsigned a, unsigned b) { return (a > b) - (a < b); }

static void ledger_add(int quantity, unsigned price, unsigned customer, unsigned name_length) {
  SAMPLER_FUNCTION_ENTRY(ledger_add_entry);
  struct order* o = &orders[count];
  /* BUG 1: a negative quantity is dropped, and the summary with it. */
  if (SAMPLER_BRANCH(negative_quantity, quantity < 0)) {
    summary = NULL;
    return;
  }
  /* BUG 2: a long name is cut and marked; check_names() treats the mark as corruption. */
  if (SAMPLER_BRANCH(long_name, name_length > NAME_CAPACITY)) {
    o->name_cut = 1;
    name_length = NAME_CAPACITY;
  }
  unsigned limit = 400 + customer % 200;
  SAMPLER_SCALAR_PAIR_UNSIGNED(price_vs_limit, price, limit);
  unsigned shown = SAMPLER_BRANCH(even_price, price % 2 == 0) ? price / 2 : price;
  if (SAMPLER_BRANCH(large_price, price > 500)) shown += 1;
  if (SAMPLER_BRANCH(regular, customer % 3 == 0)) shown += 2;
  memset(o->name, 'a' + (int)(customer % 26), name_length);
  o->name[name_length] = '\0';
  SAMPLER_RETURN(compared, compare_prices(price, limit));
  o->quantity = quantity;
  o->price = shown;
  if (summary != NULL) {
    summary->total += (long)quantity * (long)shown;
    summary->last = o;
  }
  ++count;
}

static void summarize(void) {
  SAMPLER_FUNCTION_ENTRY(summarize_entry);
  printf("%d orders, total %ld\n", count, summary->total);
}

static void check_names(void) {
  for (int i = 0; i < count; ++i) {
    if (orders[i].name_cut) abort(); /* "corrupt name": the consequence of bug 2 */
  }
}

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] < '0' || argv[1][0] > '9') {
    fprintf(stderr, "usage: sampler-example-twobugs SEED\n");
    return 2;
  }
  unsigned long seed = strtoul(argv[1], NULL, 10);
  random_state = seed * 0x9e3779b97f4a7c15ull + 1;
  int bug1 = seed % 5 == 0, bug2 = seed % 7 == 3;
  for (int n = 0; n < ORDERS; ++n) {
    int quantity = bug1 && next_random(4) == 0 ? -1 - (int)next_random(9) : 1 + (int)next_random(9);
    unsigned price = 1 + next_random(999);
    unsigned customer = next_random(10000);
    unsigned name_length = bug2 && next_random(4) == 0 ? NAME_CAPACITY + 1 + next_random(20) : 3 + next_random(20);
    ledger_add(quantity, price, customer, name_length);
  }
  check_names();
  summarize();
  return 0;
}
