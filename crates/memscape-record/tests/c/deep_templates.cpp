// Deep C++ stacks for the unwinder comparison: recursive templates, std::function, lambdas,
// containers growing inside std::sort comparators and virtual calls, an exception thrown and
// caught through allocating frames (at -O2: frames without a frame pointer, CFA moving
// within functions).
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
#include <cstdio>

template <int N> struct Depth {
    static std::size_t run(std::map<std::string, std::vector<int>> &m, int i) {
        std::vector<int> local(static_cast<std::size_t>(N + i % 7));
        m[std::to_string(N) + ":" + std::to_string(i % 50)].push_back(N);
        return local.size() + Depth<N - 1>::run(m, i);
    }
};
template <> struct Depth<0> {
    static std::size_t run(std::map<std::string, std::vector<int>> &m, int i) {
        if (i % 97 == 0) throw std::runtime_error(std::string(64, 'e'));
        return m.size();
    }
};

struct Shape {
    virtual ~Shape() = default;
    virtual std::unique_ptr<Shape> clone(int depth) const = 0;
};
struct Box : Shape {
    std::vector<double> sides;
    explicit Box(int n) : sides(static_cast<std::size_t>(n), 1.0) {}
    std::unique_ptr<Shape> clone(int depth) const override {
        if (depth == 0) return std::make_unique<Box>(static_cast<int>(sides.size()));
        auto inner = clone(depth - 1);
        return std::make_unique<Box>(static_cast<int>(sides.size()) + depth);
    }
};

int main() {
    std::map<std::string, std::vector<int>> m;
    std::size_t total = 0;
    for (int i = 1; i < 3000; i++) {
        try {
            total += Depth<24>::run(m, i);
        } catch (const std::exception &e) {
            total += std::string(e.what()).size();
        }
    }
    std::vector<std::function<std::string(int)>> fs;
    for (int i = 0; i < 200; i++) fs.push_back([i](int k) { return std::string(static_cast<std::size_t>(i + k), 'f'); });
    std::vector<std::string> words;
    for (auto &f : fs) words.push_back(f(3));
    std::sort(words.begin(), words.end(), [](const std::string &a, const std::string &b) {
        std::string ka = a + "|", kb = b + "|";
        return ka.size() > kb.size();
    });
    Box box(4);
    for (int i = 0; i < 300; i++) total += box.clone(i % 20) != nullptr;
    std::printf("%zu %zu\n", total, words.size());
    return 0;
}
