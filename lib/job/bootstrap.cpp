#include "job/bootstrap.h"

namespace kinetic {

namespace {

// Kept short: it travels in every Job's spec. Contexts are tar.zst; Python's standard library
// reads zstd only from 3.14 on, so older images decompress with the `zstd` tool (the generated
// Dockerfile installs it; it is a generic package, not kinetic's).
constexpr std::string_view kSource =
    R"PY(import hashlib,json,os,shutil,signal,subprocess,sys,tarfile,time,urllib.parse,urllib.request as U
E=os.environ;J=E["KINETIC_JOB_ID"];H=E.get("STORAGE_EMULATOR_HOST","")
B=(H if "://" in H else "http://"+H) if H else "https://storage.googleapis.com"
M=E.get("GCE_METADATA_HOST","metadata.google.internal");T=[None,0]
def tok():
 if H:return None
 if time.time()>T[1]-60:
  r=U.Request("http://%s/computeMetadata/v1/instance/service-accounts/default/token"%M,headers={"Metadata-Flavor":"Google"})
  d=json.load(U.urlopen(r,timeout=30));T[0]=d["access_token"];T[1]=time.time()+d.get("expires_in",300)
 return T[0]
def call(m,u,data=None,h={}):
 for i in range(8):
  h2=dict(h);t=tok()
  if t:h2["Authorization"]="Bearer "+t
  try:return U.urlopen(U.Request(B+u,data=data,method=m,headers=h2),timeout=300)
  except Exception as e:
   c=getattr(e,"code",0)
   if c and c not in(408,429,500,502,503,504):raise
   time.sleep(min(30,2**i))
 raise SystemExit("kinetic: giving up on %s %s"%(m,u))
def split(g):b,_,n=g[5:].partition("/");return b,n
def get(g,p):
 b,n=split(g);r=call("GET","/storage/v1/b/%s/o/%s?alt=media"%(b,urllib.parse.quote(n,safe="")))
 with open(p,"wb") as f:shutil.copyfileobj(r,f)
def put(g,p,ct="application/octet-stream"):
 b,n=split(g)
 with open(p,"rb") as f:call("POST","/upload/storage/v1/b/%s/o?uploadType=media&name=%s"%(b,urllib.parse.quote(n,safe="")),f.read(),{"Content-Type":ct})
R=E["KINETIC_RESULTS_URI"];W="/tmp/kinetic";C=W+"/ctx";O=E.setdefault("KINETIC_OUTPUT_DIR",W+"/output");K=E.setdefault("KINETIC_CHECKPOINT_DIR",W+"/checkpoints")
for d in(C,O,K):os.makedirs(d,exist_ok=True)
st={"id":J,"state":"running","backend":"gke","started":time.strftime("%Y-%m-%dT%H:%M:%SZ",time.gmtime())};t0=time.time();code=126;p=None
def fin(s,c,err=""):
 st.update(state=s,exit_code=c,error=err,finished=time.strftime("%Y-%m-%dT%H:%M:%SZ",time.gmtime()),duration_seconds=time.time()-t0)
def term(*a):
 if p:os.killpg(p.pid,signal.SIGTERM)
signal.signal(signal.SIGTERM,term)
try:
 get(E["KINETIC_SPEC_URI"],W+"/spec.json");S=json.load(open(W+"/spec.json"))
 a=W+"/ctx.tar.zst";get(E["KINETIC_CONTEXT_URI"],a)
 h=hashlib.sha256()
 with open(a,"rb") as f:
  for b in iter(lambda:f.read(1<<20),b""):h.update(b)
 if h.hexdigest()!=E["KINETIC_CONTEXT_SHA256"]:raise SystemExit("kinetic: context checksum mismatch")
 z=subprocess.Popen(["zstd","-dcq",a],stdout=subprocess.PIPE)
 with tarfile.open(fileobj=z.stdout,mode="r|") as t:
  t.extractall(C,**({"filter":"data"} if hasattr(tarfile,"data_filter") else {}))
 if z.wait():raise SystemExit("kinetic: cannot decompress the context")
 f=os.path.join(C,S["file"]);k=S["kind"];cwd=os.path.join(C,S.get("workdir",""))
 cmd={"python":["python3","-u",f],"shell":["bash",f]}.get(k,[f])
 if k=="cpp":
  x=W+"/job.bin";c=subprocess.call(["g++","-O2","-std=c++20","-o",x,f],cwd=cwd)
  if c:fin("failed",c,"compiling %s failed (g++ exit %d)"%(S["file"],c));raise StopIteration
  cmd=[x]
 p=subprocess.Popen(cmd+S.get("args",[]),cwd=cwd,start_new_session=True);code=p.wait()
 fin("succeeded" if code==0 else "failed",code if code>=0 else 128-code,"" if code==0 else "job exited with code %d"%code)
except StopIteration:code=st["exit_code"]
except BaseException as e:
 fin("failed",126,str(e));print("kinetic: %s"%e,file=sys.stderr)
code=st["exit_code"]
try:
 with tarfile.open(W+"/outputs.tar.gz","w:gz") as t:t.add(O,arcname=".")
 put(R+"outputs.tar.gz",W+"/outputs.tar.gz","application/gzip")
 for r,_,fs in os.walk(K):
  for n in fs:q=os.path.join(r,n);put(R+"checkpoints/"+os.path.relpath(q,K),q)
finally:
 open(W+"/status.json","w").write(json.dumps(st));put(R+"status.json",W+"/status.json","application/json")
sys.exit(code)
)PY";

}  // namespace

std::string_view bootstrap_source() {
  return kSource;
}

std::vector<std::string> bootstrap_command() {
  return {"python3", "-c", std::string(kSource)};
}

std::vector<std::pair<std::string, std::string>> bootstrap_env(const std::string& job_id,
                                                               const std::string& context_uri,
                                                               const std::string& context_sha256,
                                                               const std::string& spec_uri,
                                                               const std::string& results_uri) {
  return {{"KINETIC_JOB_ID", job_id},
          {"KINETIC_CONTEXT_URI", context_uri},
          {"KINETIC_CONTEXT_SHA256", context_sha256},
          {"KINETIC_SPEC_URI", spec_uri},
          {"KINETIC_RESULTS_URI", results_uri}};
}

}  // namespace kinetic
