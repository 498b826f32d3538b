// C++: operator new/delete, containers and strings.
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <cstdio>

struct Node { int value; std::string name; };

int main() {
    std::vector<std::unique_ptr<Node>> nodes;
    for (int i = 0; i < 2000; i++) nodes.push_back(std::make_unique<Node>(Node{i, std::string(40, 'x')}));
    std::map<int, std::string> m;
    for (int i = 0; i < 500; i++) m[i] = std::to_string(i) + std::string(30, 'y');
    int *arr = new int[1000];
    delete[] arr;
    nodes.clear();
    std::printf("%zu\n", m.size());
    return 0;
}
