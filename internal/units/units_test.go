package units

import "testing"

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		unit bool
	}{
		{"4096", 4096, false}, {"512KiB", 512 << 10, true}, {"50 MiB", 50 << 20, true},
		{"2GiB", 2 << 30, true}, {"10MB", 10e6, true}, {"1.5mib", 1.5 * (1 << 20), true},
		{"0", 0, false}, {"7B", 7, true}, {"1e3", 1000, false},
	} {
		got, unit, err := ParseSize(c.in)
		if err != nil || got != c.want || unit != c.unit {
			t.Errorf("ParseSize(%q) = %v, %v, %v; want %v, %v", c.in, got, unit, err, c.want, c.unit)
		}
	}
	for _, bad := range []string{"", "MiB", "-1", "10M", "5k", "1e400", "ten", "NaN"} {
		if _, _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		unit bool
	}{
		{"2000", 2000, false}, {"2k", 2000, true}, {"1.5M", 1.5e6, true}, {"3 G", 3e9, true},
		{"2K", 2000, true}, {"0", 0, false}, {"1e3", 1000, false}, {"4P", 4e15, true},
	} {
		got, unit, err := ParseCount(c.in)
		if err != nil || got != c.want || unit != c.unit {
			t.Errorf("ParseCount(%q) = %v, %v, %v; want %v, %v", c.in, got, unit, err, c.want, c.unit)
		}
	}
	for _, bad := range []string{"", "k", "-1", "2KB", "2KiB", "1e400", "ten", "NaN", "2x"} {
		if _, _, err := ParseCount(bad); err == nil {
			t.Errorf("ParseCount(%q) accepted", bad)
		}
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"10%": 0.1, "2.5 %": 0.025, "0%": 0, "150%": 1.5} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"10", "-5%", "x%", "%"} {
		if _, err := ParsePercent(bad); err == nil {
			t.Errorf("ParsePercent(%q) accepted", bad)
		}
	}
}
