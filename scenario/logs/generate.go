package logs

import (
	"fmt"
	"strconv"
)

// The generator, after the study: value lists of prime lengths cycled
// together. Record i takes timestamp i mod 1009, machine i mod 23, service
// i mod 17, severity entry i mod 19 and search word i mod 29. Since the
// first four lengths are pairwise coprime, the first 1009 x 23 x 17 x 19 =
// 7,495,861 records are distinct combinations (the Chinese remainder
// theorem), and how many of the first n records match any query on these
// fields follows from arithmetic alone: the ground truth needs no second
// database. The data depends on the record number only, not on the seed.
const (
	NumTimestamps = 1009
	NumMachines   = 23
	NumServices   = 17
	NumSeverities = 19 // entries; the values are 0-7, some repeated
	NumWords      = 29 // search words, one per message
	// Distinct is how many records are distinct combinations of timestamp,
	// machine, service and severity entry.
	Distinct = NumTimestamps * NumMachines * NumServices * NumSeverities
)

// Timestamps: 1009 distinct 10-digit epoch seconds, a minute apart, from
// BaseTimestamp (2017-07-14). Freshness probes use timestamps below
// FreshBase + probes, outside this list, so they never change a count.
const (
	BaseTimestamp = 1_500_000_000
	TimestampStep = 60
	FreshBase     = 1_400_000_000
)

// Timestamp returns the a-th timestamp of the list.
func Timestamp(a int) int64 { return BaseTimestamp + int64(a)*TimestampStep }

var (
	machines   [NumMachines]string
	services   = [NumServices]string{"auth", "billing", "search", "checkout", "inventory", "gateway", "mailer", "scheduler", "reports", "profile", "catalog", "payments", "shipping", "notifier", "ledger", "sessions", "analytics"}
	severities [NumSeverities]int
	// words are what logs.search looks for: each message holds exactly one,
	// as a whole word between spaces; no other part of any message does.
	words = [NumWords]string{"kernel", "timeout", "refused", "panic", "retry", "deadlock", "checksum", "throttled", "evicted",
		"rebalance", "snapshot", "handshake", "overflow", "backoff", "quota", "failover", "rollback", "latency", "segfault",
		"watchdog", "heartbeat", "certificate", "partition", "compaction", "upstream", "saturated", "corrupted", "unreachable", "degraded"}
	// filler pads messages to MessageLen characters.
	filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua " +
		"ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat duis aute irure " +
		"dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur excepteur sint occaecat cupidatat non"
)

func init() {
	for m := range machines {
		machines[m] = fmt.Sprintf("host%02d.rack%d.dc%d.example", m+1, m%4+1, m%2+1)
	}
	for j := range severities {
		severities[j] = j % (MaxSeverity + 1)
	}
}

// Machines returns the machine names, in list order.
func Machines() []string { return machines[:] }

// Services returns the service names, in list order.
func Services() []string { return services[:] }

// Words returns the search words, in list order.
func Words() []string { return words[:] }

// Generate returns record i (its id is i).
func Generate(i int64) Record {
	var r Record
	fill(&r, i, nil)
	return r
}

// fill sets r to record i, building the message in buf (which it returns
// for reuse).
func fill(r *Record, i int64, buf []byte) []byte {
	svc := services[i%NumServices]
	mach := machines[i%NumMachines]
	sev := severities[i%NumSeverities]
	*r = Record{ID: i, Timestamp: Timestamp(int(i % NumTimestamps)), Machine: mach, Service: svc, Severity: sev}
	b := buf[:0]
	b = append(b, svc...)
	b = append(b, ": "...)
	b = append(b, words[i%NumWords]...)
	b = append(b, " reported by "...)
	b = append(b, mach...)
	b = append(b, " (record "...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, ", severity "...)
	b = strconv.AppendInt(b, int64(sev), 10)
	b = append(b, ") "...)
	r.Message = pad(b)
	return b
}

// pad fills b up to MessageLen characters with filler text.
func pad(b []byte) string {
	for len(b) < MessageLen {
		n := min(MessageLen-len(b), len(filler))
		b = append(b, filler[:n]...)
		if len(b) < MessageLen {
			b = append(b, ' ')
		}
	}
	return string(b[:MessageLen])
}

// freshRecord returns record j of freshness probe k (k >= 1): timestamp
// FreshBase + k, a negative id, and a message with no search word.
func freshRecord(k, j, perProbe int64) Record {
	b := make([]byte, 0, MessageLen)
	b = append(b, "probe: freshness record "...)
	b = strconv.AppendInt(b, j, 10)
	b = append(b, " of probe "...)
	b = strconv.AppendInt(b, k, 10)
	b = append(b, ' ')
	return Record{ID: -1 - (k-1)*perProbe - j, Timestamp: FreshBase + k, Machine: machines[j%NumMachines],
		Service: services[j%NumServices], Severity: severities[j%NumSeverities], Message: pad(b)}
}

// crt combines residues modulo pairwise coprime moduli into the residue
// modulo their product (the Chinese remainder theorem): x = sum of
// residue_i * coef_i, modulo mod.
type crt struct {
	mod  int64
	coef []int64
}

func newCRT(mods ...int64) crt {
	c := crt{mod: 1}
	for _, m := range mods {
		c.mod *= m
	}
	for _, m := range mods {
		rest := c.mod / m
		c.coef = append(c.coef, rest*inverse(rest%m, m)%c.mod)
	}
	return c
}

// of returns the number modulo c.mod with the given residues.
func (c crt) of(res ...int64) int64 {
	var x int64
	for i, r := range res {
		x = (x + r*c.coef[i]) % c.mod
	}
	return x
}

// inverse returns the inverse of a modulo m (a and m coprime).
func inverse(a, m int64) int64 {
	// Extended Euclid.
	t, newT, r, newR := int64(0), int64(1), m, a
	for newR != 0 {
		q := r / newR
		t, newT = newT, t-q*newT
		r, newR = newR, r-q*newR
	}
	if t < 0 {
		t += m
	}
	return t
}

// countResidue returns how many of 0..n-1 are congruent to r modulo m
// (0 <= r < m).
func countResidue(r, m, n int64) int64 {
	if r >= n {
		return 0
	}
	return (n-1-r)/m + 1
}

// Ground-truth combinations of the moduli.
var (
	crtTM  = newCRT(NumTimestamps, NumMachines)
	crtTSV = newCRT(NumTimestamps, NumServices, NumSeverities)
	crtTMV = newCRT(NumTimestamps, NumMachines, NumSeverities)
)

// CountA is the ground truth of count_a among records 0..n-1: records with
// the a-th timestamp.
func CountA(a int, n int64) int64 { return countResidue(int64(a), NumTimestamps, n) }

// CountB is the ground truth of count_b: records with the a-th timestamp
// and the m-th machine.
func CountB(a, m int, n int64) int64 {
	return countResidue(crtTM.of(int64(a), int64(m)), crtTM.mod, n)
}

// CountC is the ground truth of count_c: records with the a-th timestamp,
// the s-th service and severity sev.
func CountC(a, s, sev int, n int64) int64 {
	var c int64
	for j, v := range severities {
		if v == sev {
			c += countResidue(crtTSV.of(int64(a), int64(s), int64(j)), crtTSV.mod, n)
		}
	}
	return c
}

// ErrorsPerHost is the ground truth of errors_per_host: per machine (in
// list order), the records with a timestamp from the a0-th to the a1-th and
// severity at most ErrorSeverity.
func ErrorsPerHost(a0, a1 int, n int64) [NumMachines]int64 {
	var out [NumMachines]int64
	for m := range NumMachines {
		for a := a0; a <= a1; a++ {
			for j, v := range severities {
				if v <= ErrorSeverity {
					out[m] += countResidue(crtTMV.of(int64(a), int64(m), int64(j)), crtTMV.mod, n)
				}
			}
		}
	}
	return out
}

// Search is the ground truth of search: records whose message holds the
// w-th word.
func Search(w int, n int64) int64 { return countResidue(int64(w), NumWords, n) }
