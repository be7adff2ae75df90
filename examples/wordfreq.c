/* Example 4: a word-frequency counter with a bug, the program of scripts/demo.sh's Cooperative Bug Isolation story.
 *
 *   sampler-example-wordfreq FILE             counts the words of FILE (runs of letters, case folded), then prints
 *                                             the ten most frequent and how many distinct words start with each
 *                                             letter
 *   sampler-example-wordfreq --generate SEED  writes a made-up text to stdout: SEED picks a vocabulary of invented
 *                                             words (its longest word has 8 to 32 letters) and sentences drawn
 *                                             from it, so that each seed is a different input
 *
 * The bug: a word longer than WORD_CAPACITY letters is meant to be left out of the table, but count_word() only
 * finds out after it has taken the word's slot (the branch site `too_long`). The slot stays in the table without
 * a word, and at the end count_initials() reads the first letter of that missing word: SIGSEGV, far from the
 * cause. Texts without such a word run clean. The other sites observe things that have nothing to do with the
 * crash; scripts/demo.sh runs the program over many texts and finds the cause from the sampled predicates alone.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sampler/sampler.h>

/* A generic 4-tuple scheme of our own: which length class each counted word falls in. Its site's one field,
 * "length class: 1-4, 5-8, 9-16, 17+", names the columns (scripts/demo.sh shows each predicate by that name). */
#define SAMPLER_SCHEME_NAME_length_class "length-class"
#define SAMPLER_COLUMNS_length_class 4

#define SAMPLER_UNIT_SIGNATURE "3b9e0f4c1d7a4e2f8c6b5a4d3e2f1a0b"
#define WORDFREQ_SITES(SCHEME, SITE, BOUND, END)                                                                 \
  SCHEME(function_entries, none)                                                                                 \
    SITE(hash_word_entry, "wordfreq.c", "96", "hash_word", "0")                                                  \
    SITE(count_word_entry, "wordfreq.c", "104", "count_word", "0")                                               \
    SITE(count_text_entry, "wordfreq.c", "144", "count_text", "0")                                               \
    SITE(count_initials_entry, "wordfreq.c", "186", "count_initials", "0")                                       \
    SITE(report_entry, "wordfreq.c", "200", "report", "0")                                                       \
  END(function_entries)                                                                                          \
  SCHEME(branches, none)                                                                                         \
    SITE(move_to_front, "wordfreq.c", "120", "count_word", "6", "steps > 0")                                     \
    SITE(table_full, "wordfreq.c", "130", "count_word", "9", "used == MAX_ENTRIES")                              \
    SITE(too_long, "wordfreq.c", "133", "count_word", "10", "length > WORD_CAPACITY")                            \
    SITE(is_letter, "wordfreq.c", "149", "count_text", "1", "isalpha(c)")                                        \
    SITE(is_upper, "wordfreq.c", "150", "count_text", "2", "isupper(c)")                                         \
    SITE(ends_sentence, "wordfreq.c", "161", "count_text", "4", "c == '.'")                                      \
    SITE(is_space, "wordfreq.c", "162", "count_text", "5", "isspace(c)")                                         \
    SITE(vowel_initial, "wordfreq.c", "191", "count_initials", "1", "is_vowel(word[0])")                         \
  END(branches)                                                                                                  \
  SCHEME(returns, none)                                                                                          \
    SITE(letters_compared, "wordfreq.c", "115", "count_word", "4", "memcmp")                                     \
  END(returns)                                                                                                   \
  SCHEME(scalar_pairs, none)                                                                                     \
    SITE(known_vs_length, "wordfreq.c", "112", "count_word", "3", "known", "local", "direct", "length", "local") \
    SITE(counts_compared, "wordfreq.c", "177", "by_count", "0", "a", "local", "direct", "b", "local")            \
  END(scalar_pairs)                                                                                              \
  SCHEME(float_kinds, none)                                                                                      \
    SITE(top_share, "wordfreq.c", "208", "report", "2", "share", "local", "direct")                              \
    SITE(mean_length, "wordfreq.c", "210", "report", "3", "mean", "local", "direct")                             \
  END(float_kinds)                                                                                               \
  SCHEME(coverage, none)                                                                                         \
    SITE(word_found, "wordfreq.c", "117", "count_word", "5")                                                     \
    SITE(new_word, "wordfreq.c", "128", "count_word", "7")                                                       \
    SITE(word_ended, "wordfreq.c", "155", "count_text", "3")                                                     \
  END(coverage)                                                                                                  \
  SCHEME(length_class, none)                                                                                     \
    SITE(word_length_class, "wordfreq.c", "105", "count_word", "1", "length class: 1-4, 5-8, 9-16, 17+")         \
  END(length_class)                                                                                              \
  SCHEME(bounds, none)                                                                                           \
    BOUND(word_length, SAMPLER_BOUND_U64, "wordfreq.c", "106", "count_word", "2", "length", "local", "direct")   \
    BOUND(chain_steps, SAMPLER_BOUND_I32, "wordfreq.c", "129", "count_word", "8", "steps", "local", "direct")    \
    BOUND(entries_used, SAMPLER_BOUND_I32, "wordfreq.c", "202", "report", "1", "used", "global", "direct")       \
  END(bounds)
SAMPLER_DEFINE_UNIT(WORDFREQ_SITES);

#define WORD_CAPACITY 24  /* the longest word the table keeps */
#define MAX_WORD 64       /* the tokenizer keeps this many letters of a word; the rest is dropped */
#define MAX_ENTRIES 65536 /* distinct words (and slots taken by words too long to keep) */
#define BUCKETS 64

/* One distinct word and how often it occurred. */
struct entry {
  const char* word;  /* NUL-terminated, in `letters`; NULL if the slot never received its word */
  size_t length;
  unsigned count;
  int next;  /* the next entry of the same hash bucket, or -1 */
};

static struct entry entries[MAX_ENTRIES];
static char letters[MAX_ENTRIES][WORD_CAPACITY + 1];
static int used;
static int buckets[BUCKETS];
static unsigned long words_counted;
static unsigned long letters_counted;

/* FNV-1a. */
static unsigned hash_word(const char* word, size_t length) {
  SAMPLER_FUNCTION_ENTRY(hash_word_entry);
  unsigned hash = 2166136261u;
  for (size_t i = 0; i < length; ++i) hash = (hash ^ (unsigned char)word[i]) * 16777619u;
  return hash;
}

/* Counts one occurrence of word[0, length), a run of lower-case letters. */
static void count_word(const char* word, size_t length) {
  SAMPLER_FUNCTION_ENTRY(count_word_entry);
  SAMPLER_TUPLE(length_class, word_length_class, length <= 4 ? 0 : length <= 8 ? 1 : length <= 16 ? 2 : 3);
  SAMPLER_BOUND(word_length, length);
  int* bucket = &buckets[hash_word(word, length) % BUCKETS];
  int steps = 0;
  for (int* link = bucket; *link >= 0; link = &entries[*link].next, ++steps) {
    struct entry* e = &entries[*link];
    size_t known = e->length;
    SAMPLER_SCALAR_PAIR_UNSIGNED(known_vs_length, known, length);
    if (known != length) continue;
    int order = memcmp(e->word, word, length);
    SAMPLER_RETURN(letters_compared, order);
    if (order != 0) continue;
    SAMPLER_COVERAGE(word_found);
    ++e->count;
    /* Move it to the front of its chain: frequent words are found at the first step. */
    if (SAMPLER_BRANCH(move_to_front, steps > 0)) {
      int found = *link;
      *link = e->next;
      e->next = *bucket;
      *bucket = found;
    }
    return;
  }
  SAMPLER_COVERAGE(new_word);
  SAMPLER_BOUND(chain_steps, steps);
  if (SAMPLER_BRANCH(table_full, used == MAX_ENTRIES)) return; /* a full table drops new words */
  struct entry* e = &entries[used++];
  /* THE BUG: a word too long to keep is skipped only after its slot was taken. The slot stays, without a word. */
  if (SAMPLER_BRANCH(too_long, length > WORD_CAPACITY)) return;
  memcpy(letters[e - entries], word, length);
  e->word = letters[e - entries];
  e->length = length;
  e->count = 1;
  e->next = *bucket;
  *bucket = (int)(e - entries);
}

/* Splits the text into words, folding upper case. */
static void count_text(FILE* in) {
  SAMPLER_FUNCTION_ENTRY(count_text_entry);
  char word[MAX_WORD];
  size_t length = 0;
  unsigned long sentences = 0, lines = 0;
  for (int c; (c = getc(in)) != EOF;) {
    if (SAMPLER_BRANCH(is_letter, isalpha(c))) {
      if (SAMPLER_BRANCH(is_upper, isupper(c))) c = tolower(c);
      if (length < MAX_WORD) word[length++] = (char)c;
      continue;
    }
    if (length > 0) {
      SAMPLER_COVERAGE(word_ended);
      count_word(word, length);
      ++words_counted;
      letters_counted += length;
      length = 0;
    }
    if (SAMPLER_BRANCH(ends_sentence, c == '.')) ++sentences;
    if (SAMPLER_BRANCH(is_space, isspace(c)) && c == '\n') ++lines;
  }
  if (length > 0) {
    count_word(word, length);
    ++words_counted;
    letters_counted += length;
  }
  printf("%lu words, %lu sentences, %lu lines\n", words_counted, sentences, lines);
}

/* qsort order: most frequent first, then first seen first. */
static int by_count(const void* left, const void* right) {
  const struct entry* x = *(const struct entry* const*)left;
  const struct entry* y = *(const struct entry* const*)right;
  unsigned a = x->count, b = y->count;
  SAMPLER_SCALAR_PAIR_UNSIGNED(counts_compared, a, b);
  if (a != b) return (a < b) - (a > b);
  return (x > y) - (x < y);
}

static int is_vowel(char letter) { return letter != '\0' && strchr("aeiou", letter) != NULL; }

/* How many distinct words start with each letter, and how many with a vowel. */
static void count_initials(void) {
  SAMPLER_FUNCTION_ENTRY(count_initials_entry);
  unsigned initials[26] = {0};
  unsigned vowels = 0;
  for (int i = 0; i < used; ++i) {
    const char* word = entries[i].word;
    if (SAMPLER_BRANCH(vowel_initial, is_vowel(word[0]))) ++vowels;
    ++initials[word[0] - 'a'];
  }
  printf("initials:");
  for (int letter = 0; letter < 26; ++letter) printf(" %c%u", 'a' + letter, initials[letter]);
  printf("\n%u start with a vowel\n", vowels);
}

static void report(void) {
  SAMPLER_FUNCTION_ENTRY(report_entry);
  static struct entry* order[MAX_ENTRIES];
  SAMPLER_BOUND(entries_used, used);
  for (int i = 0; i < used; ++i) order[i] = &entries[i];
  qsort(order, (size_t)used, sizeof order[0], by_count);
  for (int i = 0; i < 10 && i < used && order[i]->count > 0; ++i) printf("%6u %s\n", order[i]->count, order[i]->word);
  if (words_counted > 0) {
    double share = (double)order[0]->count / (double)words_counted;
    SAMPLER_FLOAT_KIND(top_share, share);
    double mean = (double)letters_counted / (double)words_counted;
    SAMPLER_FLOAT_KIND(mean_length, mean);
    printf("%d distinct words, the commonest is %.2f%% of the text, %.2f letters a word on average\n", used,
           100 * share, mean);
  }
  count_initials();
}

/* ----- --generate SEED: the inputs of the demo. Not instrumented: it stands for the world outside. ----- */

static uint64_t random_state;

/* xorshift64*, enough for made-up words. */
static unsigned next_random(unsigned below) {
  random_state ^= random_state >> 12;
  random_state ^= random_state << 25;
  random_state ^= random_state >> 27;
  return (unsigned)((random_state * 2685821657736338717ull) >> 33) % below;
}

static int generate(unsigned long seed) {
  enum { MAX_VOCABULARY = 400, TEXT_WORDS = 4000 };
  static char vocabulary[MAX_VOCABULARY][33];
  random_state = seed * 0x9e3779b97f4a7c15ull + 1;
  unsigned longest = 8 + next_random(25); /* 8 to 32 letters */
  unsigned size = 150 + next_random(MAX_VOCABULARY - 150);
  for (unsigned v = 0; v < size; ++v) {
    /* Words 0 to 7 have the longest length; the others, as in real text, are short: 1 to 12 letters (at most
     * `longest`). Consonants and vowels alternate. */
    unsigned length = v < 8 ? longest : 1 + next_random(longest < 12 ? longest : 12);
    unsigned vowel_first = next_random(2);
    for (unsigned i = 0; i < length; ++i) {
      vocabulary[v][i] = (i + vowel_first) % 2 ? "bcdfghjklmnprstvz"[next_random(17)] : "aeiou"[next_random(5)];
    }
    vocabulary[v][length] = '\0';
  }
  unsigned column = 0, sentence_left = 0;
  for (unsigned n = 0; n < TEXT_WORDS; ++n) {
    const char* word = vocabulary[next_random(size)];
    int first = sentence_left == 0;
    if (first) sentence_left = 4 + next_random(12);
    --sentence_left;
    size_t length = strlen(word);
    if (column > 0 && column + 1 + length + 1 > 72) {
      putchar('\n');
      column = 0;
    } else if (column > 0) {
      putchar(' ');
      ++column;
    }
    putchar(first ? toupper((unsigned char)word[0]) : word[0]);
    fputs(word + 1, stdout);
    column += (unsigned)length;
    if (sentence_left == 0) {
      putchar('.');
      ++column;
    } else if (next_random(8) == 0) {
      putchar(',');
      ++column;
    }
  }
  putchar('\n');
  return ferror(stdout) ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "--generate") == 0) return generate(strtoul(argv[2], NULL, 10));
  if (argc != 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: sampler-example-wordfreq FILE | --generate SEED\n");
    return 2;
  }
  FILE* in = fopen(argv[1], "r");
  if (in == NULL) {
    perror(argv[1]);
    return 1;
  }
  for (int b = 0; b < BUCKETS; ++b) buckets[b] = -1;
  count_text(in);
  fclose(in);
  report();
  return 0;
}
