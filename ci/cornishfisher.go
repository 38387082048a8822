package ci

import "math"

// cornishFisher returns the continuous approximation to the prob-quantile
// of the negative binomial (failures before the s-th success), from the
// Cornish–Fisher expansion to fourth order in s^(−1/2) with the exact
// cumulants. It is the starting point of the exact search and, for large
// s·q, the answer itself; its error falls like s^(−5/2) in units of the
// standard deviation.
func cornishFisher(prob, s, p float64) float64 {
	q := 1 - p
	g := q / p
	base := g * (1 + g) // κ₂ of one geometric variable
	k2 := s * base
	k3 := s * base * (1 + 2*g)
	k4 := s * base * (1 + 6*g*(1+g))
	k5 := s * base * (1 + 2*g) * (1 + 12*g*(1+g))
	k6 := s * base * (1 + g*(30+g*(150+g*(240+g*120))))
	sd := math.Sqrt(k2)
	g1 := k3 / (k2 * sd)
	g2 := k4 / (k2 * k2)
	g3 := k5 / (k2 * k2 * sd)
	g4 := k6 / (k2 * k2 * k2)
	z := normalQuantile(prob)
	w := z + cfTerms(z, g1, g2, g3, g4)
	return s*g + sd*w
}

// cfTerms are the Cornish–Fisher corrections in Hermite polynomials.
func cfTerms(z, g1, g2, g3, g4 float64) float64 {
	he1 := z
	he2 := z*z - 1
	he3 := z*z*z - 3*z
	he4 := z*z*z*z - 6*z*z + 3
	he5 := z*z*z*z*z - 10*z*z*z + 15*z
	o1 := he2 / 6 * g1
	o2 := he3/24*g2 - (2*he3+he1)/36*g1*g1
	o3 := he4/120*g3 - (he4+he2)/24*g1*g2 + (12*he4+19*he2)/324*g1*g1*g1
	o4 := he5/720*g4 - (3*he5+6*he3+2*he1)/384*g2*g2 - (2*he5+3*he3)/180*g1*g3 +
		(14*he5+37*he3+8*he1)/288*g1*g1*g2 - (252*he5+832*he3+227*he1)/7776*g1*g1*g1*g1
	return o1 + o2 + o3 + o4
}

// normalQuantile is Φ⁻¹(prob).
func normalQuantile(prob float64) float64 {
	return -math.Sqrt2 * math.Erfcinv(2*prob)
}

// normalCDF is Φ(z).
func normalCDF(z float64) float64 {
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}
