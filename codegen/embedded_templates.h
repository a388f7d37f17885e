// The kernel templates of templates/, embedded into the library at build time
// (cmake/embed_templates.cmake), so an installed library needs no source tree.
#pragma once

#include <string>
#include <vector>

namespace smla {

struct EmbeddedTemplate {
  const char* name;  // file name, as the templates #include each other
  const char* text;
};

const std::vector<EmbeddedTemplate>& embedded_templates();

}  // namespace smla
