package netns

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// The kernel shapes what it can without sch_netem: packet loss and the
// partitions between groups of nodes are nftables rules in the node's
// namespace (table inet scalelab), bandwidth a tbf qdisc on both ends of
// the node's veth. Delay and jitter need netem or a proxy (package
// linkemu).

const nftTable = "scalelab"

// CheckNft says whether nftables' `nft` is there (loss and partitions
// between groups need it).
func CheckNft() error {
	if _, err := exec.LookPath("nft"); err != nil {
		return errors.New("packet loss and partitions between groups of nodes need nftables' `nft` (apt-get install nftables)")
	}
	return nil
}

// nft runs an nft script inside the node's namespace, in one go (one
// process: a fault takes effect at once).
func nft(ns string, lines ...string) error {
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("nft in %s: %s: %w", ns, strings.TrimSpace(string(out)), err)
	}
	return nil
}

// table makes the node's table and its four chains (loss and partition,
// each way) if missing: the first lines of every script.
func table() []string {
	lines := []string{"add table inet " + nftTable}
	for _, c := range []struct{ name, hook string }{{"loss_in", "input"}, {"loss_out", "output"}, {"part_in", "input"}, {"part_out", "output"}} {
		lines = append(lines, fmt.Sprintf("add chain inet %s %s { type filter hook %s priority 0 ; }", nftTable, c.name, c.hook))
	}
	return lines
}

// SetLoss drops pct per cent of the packets the node sends and of those it
// receives on its link (each way, independently), as a lossy network
// does; 0 removes the loss.
func (t *Topology) SetLoss(node string, pct float64) error {
	n, err := t.node(node)
	if err != nil {
		return err
	}
	if pct < 0 || pct > 100 {
		return fmt.Errorf("loss %g%%: from 0 to 100 per cent", pct)
	}
	if err := CheckNft(); err != nil {
		return err
	}
	lines := append(table(), "flush chain inet "+nftTable+" loss_in", "flush chain inet "+nftTable+" loss_out")
	if pct > 0 {
		// per ten thousand, so that 0.01 % is exact
		random := ""
		if per := int(pct*100 + 0.5); per < 10000 {
			random = "numgen random mod 10000 < " + strconv.Itoa(per) + " "
		}
		lines = append(lines,
			"add rule inet "+nftTable+" loss_in iifname eth0 "+random+"drop",
			"add rule inet "+nftTable+" loss_out oifname eth0 "+random+"drop")
	}
	return nft(n.Namespace, lines...)
}

// Separate cuts every node of a from every node of b, both ways, each
// side still reaching its own group and the load generator (a partition
// between groups); Join undoes it. A node named in neither keeps every
// link.
func (t *Topology) Separate(a, b []string) error {
	if err := CheckNft(); err != nil {
		return err
	}
	for _, side := range [][2][]string{{a, b}, {b, a}} {
		var far []string
		for _, name := range side[1] {
			m, err := t.node(name)
			if err != nil {
				return err
			}
			far = append(far, m.Address)
		}
		set := "{ " + strings.Join(far, ", ") + " }"
		for _, name := range side[0] {
			n, err := t.node(name)
			if err != nil {
				return err
			}
			if err := nft(n.Namespace, append(table(),
				"add rule inet "+nftTable+" part_in ip saddr "+set+" drop",
				"add rule inet "+nftTable+" part_out ip daddr "+set+" drop")...); err != nil {
				return err
			}
		}
	}
	return nil
}

// Join removes every partition rule of the nodes (Separate undone).
func (t *Topology) Join(nodes []string) error {
	var errs []error
	for _, name := range nodes {
		n, err := t.node(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !hasTable(n.Namespace) {
			continue
		}
		errs = append(errs, nft(n.Namespace, "flush chain inet "+nftTable+" part_in", "flush chain inet "+nftTable+" part_out"))
	}
	return errors.Join(errs...)
}

// Separated reports whether the node has partition rules (a run that died
// could not remove them).
func (t *Topology) Separated(node string) bool {
	n, err := t.node(node)
	if err != nil || !hasTable(n.Namespace) {
		return false
	}
	out, err := exec.Command("ip", "netns", "exec", n.Namespace, "nft", "list", "chain", "inet", nftTable, "part_out").Output()
	return err == nil && strings.Contains(string(out), "drop")
}

// hasTable reports whether the node's namespace has our nftables table.
func hasTable(ns string) bool {
	if CheckNft() != nil {
		return false
	}
	return exec.Command("ip", "netns", "exec", ns, "nft", "list", "table", "inet", nftTable).Run() == nil
}

// SetRate limits the node's link to kbit kilobits per second each way (a
// tbf qdisc, with iproute2's tc, on both ends of its veth); 0 removes the
// limit.
func (t *Topology) SetRate(node string, kbit int64) error {
	n, err := t.node(node)
	if err != nil {
		return err
	}
	for _, dev := range [][]string{{"dev", n.HostVeth}, {"-n", n.Namespace, "dev", "eth0"}} {
		var args []string
		if len(dev) == 4 {
			args = append(args, dev[:2]...)
			dev = dev[2:]
		}
		if kbit == 0 {
			args = append(append(append(args, "qdisc", "del"), dev...), "root")
		} else {
			// a burst of at least 10 ms of traffic (and one MTU), a queue of
			// at most 50 ms
			burst := max(kbit*1000/8/100, 15000)
			args = append(append(append(args, "qdisc", "replace"), dev...), "root", "tbf",
				"rate", strconv.FormatInt(kbit, 10)+"kbit", "burst", strconv.FormatInt(burst, 10), "latency", "50ms")
		}
		out, err := exec.Command("tc", args...).CombinedOutput()
		if err != nil {
			msg := strings.TrimSpace(string(out))
			if kbit == 0 && (strings.Contains(msg, "handle of zero") || strings.Contains(msg, "No such file") || strings.Contains(msg, "Invalid handle")) {
				continue // no limit to remove
			}
			return fmt.Errorf("rate of %s: tc %s: %s: %w", node, strings.Join(args, " "), msg, err)
		}
	}
	return nil
}
