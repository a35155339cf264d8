package search

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// Epoch is the start of the order dates: orders are spread over 2025.
var Epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const yearMillis = 365 * 24 * 3600 * 1000

// Categories are the product categories of the e-commerce sample orders;
// each order has one.
var Categories = []string{"Men's Clothing", "Women's Clothing", "Women's Shoes", "Men's Shoes", "Women's Accessories", "Men's Accessories"}

var (
	firstNames = []string{"Eddie", "Mary", "Gwen", "Diane", "Jim", "Sonya", "Abd", "Elyssa", "Robbie", "Youssef", "Rabbia", "Pia", "Wagdi", "Jackson", "Betty", "Selena"}
	lastNames  = []string{"Underwood", "Bailey", "Butler", "Chandler", "Weber", "Mccarthy", "Lambert", "Potter", "Reese", "Jensen", "Carpenter", "Graham", "Shaw", "Harper"}
	cities     = []struct {
		name, country string
		lat, lon      float64
	}{
		{"Cairo", "EG", 30.1, 31.3}, {"New York", "US", 40.8, -74.0}, {"Dubai", "AE", 25.3, 55.3}, {"Istanbul", "TR", 41.0, 29.0},
		{"London", "GB", 51.5, -0.1}, {"Paris", "FR", 48.9, 2.4}, {"Berlin", "DE", 52.5, 13.4}, {"Bogotá", "CO", 4.6, -74.1},
		{"Marrakesh", "MA", 31.6, -8.0}, {"Shanghai", "CN", 31.2, 121.5}, {"Los Angeles", "US", 34.1, -118.2}, {"Monte Carlo", "MC", 43.7, 7.4},
	}
	products = [][]string{ // per category, in Categories' order
		{"Basic T-shirt", "Sweatshirt", "Chinos", "Winter jacket", "Polo shirt", "Jumper"},
		{"Summer dress", "Blouse", "Cardigan", "Jeans Skinny Fit", "Pencil skirt", "Tunic"},
		{"Ankle boots", "Sandals", "High heels", "Ballet pumps", "Trainers", "Wedge sandals"},
		{"Lace-up boots", "Loafers", "Sneakers", "Slip-ons", "Derby shoes", "Hiking shoes"},
		{"Handbag", "Scarf", "Watch", "Sunglasses", "Necklace", "Hat"},
		{"Belt", "Wallet", "Watch", "Sunglasses", "Rucksack", "Beanie"},
	}
)

// Customer is an order's customer.
type Customer struct {
	ID        string `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Gender    string `json:"gender"`
	City      string `json:"city"`
	Country   string `json:"country"`
}

// Geo is a geo point.
type Geo struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// Product is one line of an order.
type Product struct {
	ProductName string  `json:"product_name"`
	BasePrice   float64 `json:"base_price"`
	Quantity    int     `json:"quantity"`
}

// Order is one e-commerce order document.
type Order struct {
	OrderID          string    `json:"order_id"`
	OrderDate        int64     `json:"order_date"` // epoch ms
	Customer         Customer  `json:"customer"`
	Geo              Geo       `json:"geo"`
	Category         string    `json:"category"`
	Products         []Product `json:"products"`
	TaxfulTotalPrice float64   `json:"taxful_total_price"`
	Currency         string    `json:"currency"`
}

// rngFor is order i's generator: seeded by the order number only, so the
// data (and the ground truth) does not depend on the run seed.
func rngFor(i int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(i), 0x5ea4c4_0de45))
}

// CategoryOf returns the category index of order i (the generator's first
// draw), without generating the rest of the order.
func CategoryOf(i int64) int { return rngFor(i).IntN(len(Categories)) }

// OrderID is the document id and order_id of order i.
func OrderID(i int64) string { return strconv.FormatInt(i, 10) }

func cents(v float64) float64 { return math.Round(v*100) / 100 }

// Generate returns order i.
func Generate(i int64) Order {
	r := rngFor(i)
	cat := r.IntN(len(Categories)) // first: CategoryOf depends on it
	gender := "MALE"
	if Categories[cat][0] == 'W' {
		gender = "FEMALE"
	}
	city := cities[r.IntN(len(cities))]
	o := Order{
		OrderID:   OrderID(i),
		OrderDate: Epoch.UnixMilli() + r.Int64N(yearMillis),
		Customer: Customer{
			ID:        strconv.Itoa(r.IntN(60)),
			FirstName: firstNames[r.IntN(len(firstNames))],
			LastName:  lastNames[r.IntN(len(lastNames))],
			Gender:    gender,
			City:      city.name,
			Country:   city.country,
		},
		Geo:      Geo{Lat: cents(city.lat + r.Float64()/10), Lon: cents(city.lon + r.Float64()/10)},
		Category: Categories[cat],
		Currency: "EUR",
	}
	n := 1 + r.IntN(4)
	total := 0.0
	for k := 0; k < n; k++ {
		p := Product{
			ProductName: products[cat][r.IntN(len(products[cat]))],
			BasePrice:   float64(499+r.IntN(20000)) / 100,
			Quantity:    1 + r.IntN(3),
		}
		total += p.BasePrice * float64(p.Quantity)
		o.Products = append(o.Products, p)
	}
	o.TaxfulTotalPrice = cents(total)
	return o
}

// JSON encodes the order.
func (o Order) JSON() []byte {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err) // plain struct: cannot fail
	}
	return b
}
