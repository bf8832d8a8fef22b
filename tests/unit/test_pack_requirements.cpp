#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "pack/requirements.h"

namespace kinetic {
namespace {

using Lines = std::vector<std::string>;

TEST(RequirementsTest, NormalizesNamesSpacingCommentsAndOrder) {
  EXPECT_EQ(normalize_requirements("# deps\n"
                                   "\n"
                                   "  Numpy >= 1.2   # the array lib\n"
                                   "torch==2.3.0\n"
                                   "Jax[CUDA12_pip , TPU] ==0.4.30\n"
                                   "scikit_learn\n"
                                   "zope.interface ~= 6.0\n"
                                   "Typing_Extensions\t>=4 , <5\n"),
            (Lines{"jax[cuda12-pip,tpu]==0.4.30", "numpy>=1.2", "scikit-learn", "torch==2.3.0",
                   "typing-extensions<5,>=4", "zope-interface~=6.0"}));
}

TEST(RequirementsTest, DeduplicatesAfterNormalizing) {
  EXPECT_EQ(normalize_requirements("numpy\nNumPy\nnumpy  \n\n# x\nnumpy # again\n"),
            Lines{"numpy"});
  EXPECT_EQ(normalize_requirements("a_b.c==1\nA-B-C == 1\n"), Lines{"a-b-c==1"});
}

TEST(RequirementsTest, VersionsMarkersAndUrlsKeepTheirCase) {
  EXPECT_EQ(normalize_requirements("Foo==1.0RC1\n"), Lines{"foo==1.0RC1"});
  EXPECT_EQ(normalize_requirements("MyPkg @ https://Example.com/MyPkg-1.0.whl#sha256=AbC\n"),
            Lines{"mypkg @ https://Example.com/MyPkg-1.0.whl#sha256=AbC"});
}

TEST(RequirementsTest, MarkerSpacingAndQuotesAreCanonical) {
  const std::string want = "tomli>=2; python_version < \"3.11\"";
  EXPECT_EQ(normalize_requirements("tomli>=2;python_version<'3.11'"), Lines{want});
  EXPECT_EQ(normalize_requirements("tomli >= 2 ; python_version  <  \"3.11\""), Lines{want});
  EXPECT_EQ(normalize_requirements("x; (os_name=='nt' or sys_platform == \"linux\")and extra!='a'"),
            Lines{"x; (os_name == \"nt\" or sys_platform == \"linux\") and extra != \"a\""});
  EXPECT_EQ(normalize_requirements("pkg @ https://h/p.whl ; python_version>='3.9'"),
            Lines{"pkg @ https://h/p.whl ; python_version >= \"3.9\""});
}

TEST(RequirementsTest, OptionLinesAndPathsAreKeptAsWritten) {
  EXPECT_EQ(normalize_requirements("--extra-index-url   https://download.pytorch.org/whl/cpu\n"
                                   "-r  other.txt\n"
                                   "./local_pkg\n"
                                   "git+https://github.com/Org/Repo.git@v1#egg=Repo\n"
                                   "My_Wheel-1.0-py3-none-any.whl\n"
                                   "torch\n"),
            (Lines{"--extra-index-url https://download.pytorch.org/whl/cpu", "-r other.txt",
                   "./local_pkg", "My_Wheel-1.0-py3-none-any.whl",
                   "git+https://github.com/Org/Repo.git@v1#egg=Repo", "torch"}));
}

TEST(RequirementsTest, ContinuationLinesAndHashes) {
  EXPECT_EQ(normalize_requirements("Requests==2.31.0 \\\n"
                                   "    --hash=sha256:aaa \\\n"
                                   "    --hash=sha256:bbb\r\n"
                                   "idna==3.7\r\n"),
            (Lines{"idna==3.7", "requests==2.31.0 --hash=sha256:aaa --hash=sha256:bbb"}));
}

TEST(RequirementsTest, NormalizingIsIdempotent) {
  const char* text =
      "Jax[tpu]>=0.4 ; python_version >= '3.10'\n"
      "pkg @ https://h/p.whl ; sys_platform == 'linux'\n"
      "--index-url https://x\n"
      "requests==2 --hash=sha256:a\n"
      "foo (>=1.0)\n";
  Lines once = normalize_requirements(text);
  std::string joined;
  for (const auto& l : once) joined += l + "\n";
  EXPECT_EQ(normalize_requirements(joined), once);
}

TEST(RequirementsTest, EmptyOrCommentOnlyTextIsEmpty) {
  EXPECT_TRUE(normalize_requirements("").empty());
  EXPECT_TRUE(normalize_requirements("\n  \n# only a comment\n\t# another\n").empty());
}

TEST(RequirementsTest, PyprojectProjectDependencies) {
  const char* toml = R"(# top comment
[build-system]
requires = ["setuptools>=61", "wheel"]   # not these
dependencies = ["not-this-one"]

[project]
name = "demo"
version = "0.1"
description = """
dependencies = ["fake"]
"""
dependencies = [
  "Numpy >= 1.26",  # trailing comment
  'jax[tpu]==0.4.30',
  # a comment line
  "tomli; python_version<'3.11'",
  "escaped\"quote",
]

[project.optional-dependencies]
dev = ["pytest"]
)";
  EXPECT_EQ(pyproject_dependencies(toml),
            (Lines{"escaped\"quote", "jax[tpu]==0.4.30", "numpy>=1.26",
                   "tomli; python_version < \"3.11\""}));
}

TEST(RequirementsTest, PyprojectWithoutDependenciesIsEmpty) {
  EXPECT_TRUE(pyproject_dependencies("[tool.ruff]\nline-length = 100\n").empty());
  EXPECT_TRUE(
      pyproject_dependencies("[project]\nname = \"x\"\ndynamic = [\"dependencies\"]\n").empty());
  EXPECT_TRUE(pyproject_dependencies("").empty());
  // [project.urls] is another table: its keys are not [project]'s.
  EXPECT_TRUE(pyproject_dependencies("[project.urls]\ndependencies = [\"x\"]\n").empty());
}

TEST(RequirementsTest, PyprojectDottedAndInlineForms) {
  EXPECT_EQ(pyproject_dependencies("project.dependencies = [\"a\", \"B\"]\n"), (Lines{"a", "b"}));
  EXPECT_EQ(pyproject_dependencies("[ project ]\n\"dependencies\" = [ 'c' , ]\n"), Lines{"c"});
  EXPECT_EQ(pyproject_dependencies("project = { name = \"x\", dependencies = [\"d\"] }\n"),
            Lines{"d"});
  EXPECT_EQ(pyproject_dependencies("[project]\ndependencies = []\n"), Lines{});
}

TEST(RequirementsTest, MalformedPyprojectIsAPackagingError) {
  try {
    pyproject_dependencies("[project]\ndependencies = [\n  \"numpy\",\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::packaging);
    EXPECT_NE(std::string(e.what()).find("pyproject.toml"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pyproject_dependencies("[project]\ndependencies = \"numpy\"\n"), Error);
  // A \\u escape that is not four hex digits is malformed, not a crash.
  EXPECT_THROW(pyproject_dependencies("[project]\ndependencies = [\"\\uZZZZ\"]\n"), Error);
  EXPECT_THROW(pyproject_dependencies("[project]\ndependencies = [\"\\uD800\"]\n"), Error);
}

class FindRequirementsTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = make_temp_dir(fs::temp_directory_path(), "kinetic-req-"); }
  void TearDown() override { remove_all_quiet(root_); }
  // The error a requirements.txt of LINE alone is refused with; "" (and a failure) when it is
  // accepted.
  std::string refusal_of(const std::string& line) {
    atomic_write(root_ / "requirements.txt", line + "\n");
    try {
      find_requirements(root_, root_, std::nullopt);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << line << " was accepted";
    return "";
  }
  fs::path root_;
};

TEST_F(FindRequirementsTest, NearestLevelWinsAndRequirementsTxtBeatsPyproject) {
  atomic_write(root_ / "requirements.txt", "rootdep\n");
  atomic_write(root_ / "a" / "pyproject.toml", "[project]\ndependencies = [\"adep\"]\n");
  atomic_write(root_ / "a" / "b" / "c" / "x.txt", "");
  auto r = find_requirements(root_ / "a" / "b" / "c", root_, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source, root_ / "a" / "pyproject.toml");
  EXPECT_EQ(r->lines, Lines{"adep"});

  atomic_write(root_ / "a" / "requirements.txt", "txtdep\n");
  r = find_requirements(root_ / "a" / "b" / "c", root_, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source, root_ / "a" / "requirements.txt");
  EXPECT_EQ(r->lines, Lines{"txtdep"});

  r = find_requirements(root_, root_, std::nullopt);  // the root itself is searched
  ASSERT_TRUE(r);
  EXPECT_EQ(r->lines, Lines{"rootdep"});
}

TEST_F(FindRequirementsTest, DoesNotLookAboveTheContextRoot) {
  atomic_write(root_ / "requirements.txt", "above\n");
  make_dirs(root_ / "ctx" / "src");
  EXPECT_FALSE(find_requirements(root_ / "ctx" / "src", root_ / "ctx", std::nullopt));
}

TEST_F(FindRequirementsTest, PyprojectWithoutDependenciesIsToolConfigAndSkipped) {
  atomic_write(root_ / "requirements.txt", "numpy\n");
  atomic_write(root_ / "sub" / "pyproject.toml", "[tool.black]\nline-length = 100\n");
  auto r = find_requirements(root_ / "sub", root_, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source, root_ / "requirements.txt");
}

TEST_F(FindRequirementsTest, ExplicitFileWins) {
  atomic_write(root_ / "requirements.txt", "found\n");
  atomic_write(root_ / "deps" / "gpu.txt", "Torch==2.3\n");
  atomic_write(root_ / "deps" / "alt.toml", "[project]\ndependencies = [\"Flax\"]\n");
  auto r = find_requirements(root_, root_, root_ / "deps" / "gpu.txt");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source, root_ / "deps" / "gpu.txt");
  EXPECT_EQ(r->lines, Lines{"torch==2.3"});
  r = find_requirements(root_, root_, root_ / "deps" / "alt.toml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->lines, Lines{"flax"});
}

TEST_F(FindRequirementsTest, MissingExplicitFileIsAnErrorNamingIt) {
  try {
    find_requirements(root_, root_, root_ / "nope.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::packaging);
    EXPECT_NE(std::string(e.what()).find("nope.txt"), std::string::npos);
  }
}

TEST_F(FindRequirementsTest, MalformedPyprojectErrorNamesTheFile) {
  atomic_write(root_ / "pyproject.toml", "[project]\ndependencies = [\"a\"\n");
  try {
    find_requirements(root_, root_, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((root_ / "pyproject.toml").string()), std::string::npos)
        << e.what();
  }
}

// The image build sees requirements.txt alone (issue #10 point 7): "-r" files are expanded
// (their content then decides the image tag), lines naming other local files are refused
// before any upload, and so are URLs carrying credentials (they would be in an image layer).
TEST_F(FindRequirementsTest, IncludedFilesAreExpandedRelativeToTheFileNamingThem) {
  atomic_write(root_ / "requirements.txt", "numpy\n-r deps/base.txt\n");
  atomic_write(root_ / "deps" / "base.txt", "--requirement=more/extra.txt\nJAX==0.4\n");
  atomic_write(root_ / "deps" / "more" / "extra.txt", "optax\nnumpy\n");
  auto r = find_requirements(root_, root_, std::nullopt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->lines, (Lines{"jax==0.4", "numpy", "optax"}));
}

// The image's tag is the hash of the requirements' lines: a remote include's content is not in
// them, so the image would never change when it does (issue #28 point 12). Refused, naming the
// way out; the local backend builds no image and takes them as they are.
TEST_F(FindRequirementsTest, RemoteIncludesAreRefusedForTheImageBuild) {
  for (const char* line :
       {"-r https://example.com/reqs.txt", "--requirement=https://h/r.txt",
        "-c https://example.com/constraints.txt", "--constraint https://h/c.txt"}) {
    atomic_write(root_ / "deps" / "base.txt", std::string(line) + "\n");
    atomic_write(root_ / "requirements.txt", "numpy\n-r deps/base.txt\n");
    try {
      find_requirements(root_, root_, std::nullopt);
      ADD_FAILURE() << line << " was accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.code(), Errc::packaging);
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find((root_ / "deps" / "base.txt").string() + ": '"), std::string::npos)
          << what;
      EXPECT_NE(what.find("is not part of the image's tag"), std::string::npos) << what;
      EXPECT_NE(what.find("download it"), std::string::npos) << what;
    }
    EXPECT_NO_THROW(find_requirements(root_, root_, std::nullopt, /*for_image_build=*/false));
  }
}

TEST_F(FindRequirementsTest, AMissingOrCyclicIncludeIsRefused) {
  atomic_write(root_ / "requirements.txt", "-r other.txt\n");
  try {
    find_requirements(root_, root_, std::nullopt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::packaging);
    EXPECT_NE(std::string(e.what()).find("'-r other.txt' names " + (root_ / "other.txt").string() +
                                         ", which does not exist"),
              std::string::npos)
        << e.what();
  }
  atomic_write(root_ / "other.txt", "-r requirements.txt\n");
  EXPECT_THROW(find_requirements(root_, root_, std::nullopt), Error);
  // Only regular files: /dev/zero would be read for ever.
  atomic_write(root_ / "requirements.txt", "-r /dev/zero\n");
  EXPECT_THROW(find_requirements(root_, root_, std::nullopt), Error);
}

TEST_F(FindRequirementsTest, LinesTheImageBuildCannotSeeAreRefused) {
  for (const char* line :
       {"-e ./mypkg", "--editable=../lib", "./local_pkg", "/abs/pkg", "pkg/sub",
        "My_Wheel-1.0-py3-none-any.whl", "dist/x-1.0.tar.gz", "pkg @ file:///src/pkg",
        "-c constraints.txt", "--constraint=c.txt", "-f ./wheels"}) {
    atomic_write(root_ / "requirements.txt", std::string(line) + "\n");
    try {
      find_requirements(root_, root_, std::nullopt);
      ADD_FAILURE() << line << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::packaging) << line;
      EXPECT_NE(std::string(e.what()).find((root_ / "requirements.txt").string() + ": '"),
                std::string::npos)
          << e.what();
    }
  }
  for (const char* line :
       {"-e git+https://github.com/org/repo.git#egg=repo", "git+ssh://git@github.com/org/repo.git",
        "pkg @ https://h/p-1.0.whl", "torch; sys_platform == \"linux\"", "-f https://h/wheels/"}) {
    atomic_write(root_ / "requirements.txt", std::string(line) + "\n");
    EXPECT_NO_THROW(find_requirements(root_, root_, std::nullopt)) << line;
  }
}

TEST_F(FindRequirementsTest, CredentialsInAUrlAreRefusedAndNeverShown) {
  for (const char* line :
       {"--index-url https://user:s3cr3t@pypi.corp/simple", "-i https://s3cr3t@pypi.corp/simple",
        "--extra-index-url=https://user:s3cr3t@pypi.corp/simple",
        "git+https://s3cr3t@github.com/org/private.git", "pkg @ https://user:s3cr3t@h/pkg-1.0.whl",
        "git+ssh://git:s3cr3t@github.com/org/repo.git"}) {
    const std::string what = refusal_of(line);
    EXPECT_NE(what.find("carries credentials"), std::string::npos) << what;
    EXPECT_NE(what.find("***@"), std::string::npos) << what;
    EXPECT_EQ(what.find("s3cr3t"), std::string::npos) << what;
  }
  atomic_write(root_ / "pyproject.toml",
               "[project]\ndependencies = [\"pkg @ https://tok@h/p.whl\"]\n");
  EXPECT_THROW(find_requirements(root_, root_, root_ / "pyproject.toml"), Error);
}

// A token in a URL's query or path is as much in the image as one before the '@' (issue #28
// point 12): refused in one line, masked, naming the secure way.
TEST_F(FindRequirementsTest, TokensInAUrlsQueryOrPathAreRefusedAndNeverShown) {
  const std::pair<const char*, const char*> cases[] = {
      {"--index-url https://pypi.corp/simple?token=s3cr3t", "https://pypi.corp/simple?token=***"},
      {"--extra-index-url=https://pypi.corp/simple/?x=s3cr3t", "https://pypi.corp/simple/?x=***"},
      {"-i https://pypi.corp/simple?a=1&s=s3cr3t", "https://pypi.corp/simple?a=***&s=***"},
      {"pkg @ https://h/p-1.0.whl?X-Goog-Signature=s3cr3t&alt=media",
       "https://h/p-1.0.whl?X-Goog-Signature=***&alt=media"},
      {"git+https://h/ghp_s3cr3ts3cr3ts3cr3t/repo.git", "git+https://h/***/repo.git"},
      {"pkg @ https://h/api/v4/glpat-s3cr3ts3cr3t/p.whl", "https://h/api/v4/***/p.whl"}};
  for (const auto& [line, shown] : cases) {
    const std::string what = refusal_of(line);
    EXPECT_NE(what.find("carries a token in a URL's path or query"), std::string::npos) << what;
    EXPECT_NE(what.find(shown), std::string::npos) << what;
    EXPECT_NE(what.find("--env PIP_EXTRA_INDEX_URL"), std::string::npos) << what;
    EXPECT_EQ(what.find("s3cr3t"), std::string::npos) << what;
  }
  // A query that is no credential on a package's URL is fine, as is a plain index.
  for (const char* line : {"pkg @ https://h/p-1.0.whl?alt=media#sha256=ab",
                           "--extra-index-url https://download.pytorch.org/whl/cpu"}) {
    atomic_write(root_ / "requirements.txt", std::string(line) + "\n");
    EXPECT_NO_THROW(find_requirements(root_, root_, std::nullopt)) << line;
  }
}

TEST_F(FindRequirementsTest, NoneFound) {
  make_dirs(root_ / "x");
  EXPECT_FALSE(find_requirements(root_ / "x", root_, std::nullopt));
}

TEST(RequiresPython, ReadFromPyprojectWalkingUp) {
  EXPECT_EQ(pyproject_requires_python("[project]\nname = \"x\"\nrequires-python = \">=3.11\"\n"
                                      "dependencies = [\"numpy\"]\n"),
            ">=3.11");
  // After the dependencies too, and absent elsewhere.
  EXPECT_EQ(pyproject_requires_python("[project]\ndependencies = []\nrequires-python = '~=3.12'\n"),
            "~=3.12");
  EXPECT_EQ(pyproject_requires_python("[tool.x]\nrequires-python = \">=3\"\n"), "");
}

// run --with: the caller's exact pin replaces the project's own line for the same package.
TEST(RequirementsTest, WithLinesReplaceTheSameProjectAndKeepTheRest) {
  Lines lines{"cloudpickle>=2", "numpy"};
  add_requirements(lines, {"CloudPickle == 3.0.0", "tqdm"}, "--with");
  EXPECT_EQ(lines, (Lines{"cloudpickle==3.0.0", "numpy", "tqdm"}));
}

TEST(RequirementsTest, WithRefusesWhatIsNotARequirement) {
  for (const std::string bad : {"-e .", "./local/pkg", "https://x.example/p.whl",
                                "pkg @ https://x.example/p.whl", "", "a\nb", "--index-url=x"}) {
    Lines lines;
    try {
      add_requirements(lines, {bad}, "--with");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find("--with"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(lines.empty());
  }
}

}  // namespace
}  // namespace kinetic
