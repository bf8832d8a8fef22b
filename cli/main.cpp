#include "app.h"

int main(int argc, char** argv) {
  return kinetic::cli::run(argc, argv);
}
