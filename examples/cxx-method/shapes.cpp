// shapes.cpp - virtual methods in a namespace, for probing a C++ method by
// its demangled name (geo::Circle::area) instead of _ZNK3geo6Circle4areaEv.
//
// Usage: shapes [N]   (N rounds, default 1000)
#include <cstdlib>
#include <memory>
#include <vector>

namespace geo {

struct Shape {
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

struct Circle : Shape {
	explicit Circle(double r) : r_(r) {}
	__attribute__((noinline)) double area() const override { return 3.14159 * r_ * r_; }
	double r_;
};

struct Square : Shape {
	explicit Square(double s) : s_(s) {}
	__attribute__((noinline)) double area() const override { return s_ * s_; }
	double s_;
};

// total_area sums the areas; report calls it for the whole scene, and
// largest only for circles.
__attribute__((noinline)) double total_area(const std::vector<std::unique_ptr<Shape>> &shapes)
{
	double t = 0;
	for (const auto &s : shapes)
		t += s->area();
	return t;
}

__attribute__((noinline)) double largest_circle(const std::vector<Circle> &cs)
{
	double best = 0;
	for (const auto &c : cs)
		if (c.area() > best)
			best = c.area();
	return best;
}

} // namespace geo

volatile double sink;

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 1000;
	std::vector<std::unique_ptr<geo::Shape>> scene;
	scene.push_back(std::make_unique<geo::Circle>(1.0));
	scene.push_back(std::make_unique<geo::Square>(2.0));
	std::vector<geo::Circle> circles{geo::Circle(1.0), geo::Circle(3.0)};
	for (int i = 0; i < n; i++) {
		sink = geo::total_area(scene);
		sink = geo::largest_circle(circles);
	}
	return 0;
}
