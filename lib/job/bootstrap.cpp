#include "job/bootstrap.h"

namespace kinetic {

namespace {

// The contract is in bootstrap.h. Kept compact (it travels in every Job's spec; tests hold it
// under 8 KiB) and standard-library only, so any image with python3 runs it.
constexpr std::string_view kSource =
    R"PY(import datetime as D,hashlib,http.client as hc,json,os,random,shutil,signal,stat,subprocess as sp,sys,tarfile,tempfile,time,urllib.parse as up,urllib.request as U
E=os.environ;J=E["KINETIC_JOB_ID"];I=E.get("JOB_COMPLETION_INDEX","0");R=E["KINETIC_RESULTS_URI"].rstrip("/")+"/"+("workers/%s/"%I if I not in("","0")else"")
o=E.get("CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE","").strip().rstrip("/")
if o.endswith("/storage/v1"):o=o[:-11].rstrip("/")
h=E.get("STORAGE_EMULATOR_HOST","").strip().rstrip("/")
B=o or((h if"://"in h else"http://"+h)if h else"https://storage.googleapis.com");A=o or not h
T=["",0];RC=(408,429,500,502,503,504);NET=(OSError,hc.HTTPException)
class F(Exception):pass
class Stop(BaseException):pass
def say(m):print("kinetic: "+m,file=sys.stderr,flush=True)
def nap(i,w=0):time.sleep(max(w,min(30,2**i)*random.uniform(.5,1)))
def call(m,u,d=None,hd={},n=8):
 for i in range(n):
  w=0
  try:
   if A and time.time()>T[1]-225:
    r=json.load(U.urlopen(U.Request("http://%s/computeMetadata/v1/instance/service-accounts/default/token"%E.get("GCE_METADATA_HOST","metadata.google.internal"),headers={"Metadata-Flavor":"Google"}),timeout=30))
    T[:]=r["access_token"],time.time()+float(r.get("expires_in",300))
   return U.urlopen(U.Request(u if"://"in u else B+u,d,dict(hd,Authorization="Bearer "+T[0])if A else hd,method=m),timeout=120)
  except U.HTTPError as e:
   if e.code==308:return e
   if e.code==401 and A:T[1]=0
   elif e.code not in RC or i==n-1:raise
   w=e.headers.get("Retry-After","");w=int(w)if w.isdigit()else 0
  except NET:
   if i==n-1:raise
  nap(i,w)
def q(n):return up.quote(n,safe="")
def split(g):b,_,n=g[5:].partition("/");return b,n
def get(g,p):
 b,n=split(g)
 try:
  for i in range(5):
   r=call("GET","/storage/v1/b/%s/o/%s?alt=media"%(b,q(n)))
   try:
    with open(p,"wb")as f:shutil.copyfileobj(r,f,1<<20);k=f.tell()
    if int(r.headers.get("Content-Length",k))==k:return
   except(ConnectionError,TimeoutError,hc.HTTPException):pass
   nap(i)
  raise OSError("the download kept breaking off")
 except NET as e:raise F(126,"cannot download %s: %s"%(g,e))
def put(g,p,ct="application/octet-stream"):
 b,n=split(g);z=os.path.getsize(p);u="/upload/storage/v1/b/%s/o?name=%s&uploadType="%(b,q(n))
 if z<1<<20:
  with open(p,"rb")as f:return call("POST",u+"media",f.read(),{"Content-Type":ct})
 L=call("POST",u+"resumable",json.dumps({"contentType":ct}).encode(),{"Content-Type":"application/json","X-Upload-Content-Length":str(z)}).headers["Location"];k=0
 with open(p,"rb")as f:
  for i in range(12):
   try:
    if 0<=k<z:f.seek(k);r=call("PUT",L,f,{"Content-Type":ct,"Content-Length":str(z-k),"Content-Range":"bytes %d-%d/%d"%(k,z-1,z)},1)
    else:r=call("PUT",L,b"",{"Content-Range":"bytes */%d"%z})
    if r.code!=308:return
    y=r.headers.get("Range");k=int(y.split("-")[1])+1 if y else 0
   except NET as e:
    if getattr(e,"code",500)not in RC:raise
    k=-1;nap(i)
 raise OSError("the upload of %s did not complete"%g)
def now():t=time.time();return time.strftime("%Y-%m-%dT%H:%M:%S",time.gmtime(t))+".%03dZ"%(t%1*1000)
W=tempfile.mkdtemp(prefix="kinetic-");C=W+"/ctx"
O=E.setdefault("KINETIC_OUTPUT_DIR",W+"/output");K=E.setdefault("KINETIC_CHECKPOINT_DIR",W+"/checkpoints")
for d in(C,O,K):os.makedirs(d,exist_ok=True)
E.update(PYTHONUNBUFFERED="1",KINETIC_BACKEND="gke")
t0=time.time();st=dict(id=J,state="failed",exit_code=126,error="",backend="gke",started=now(),attempts=1)
P=[None,0,0];M={}
def kill(s):
 try:os.killpg(P[0].pid,s)
 except Exception:pass
def on(s,_):
 if P[2]>1:return
 if P[1]and P[0]:kill(9)
 P[1]=P[1]or s
 if P[0]:kill(s)
 elif not P[2]:raise Stop
for s in(signal.SIGTERM,signal.SIGINT):signal.signal(s,on)
def run(c,cwd):
 try:P[0]=sp.Popen(c,cwd=cwd,stdin=sp.DEVNULL,start_new_session=True)
 except OSError as e:raise F(127 if isinstance(e,FileNotFoundError)else 126,"cannot start %s: %s"%(c[0],e.strerror))
 if P[1]:kill(P[1])
 r=P[0].wait();kill(9);P[0]=None;return r
try:
 get(E["KINETIC_SPEC_URI"],W+"/spec.json")
 with open(W+"/spec.json")as f:S=json.load(f)
 st.update(file=S.get("file",""),args=S.get("args",[]),accelerator=S.get("accelerator",""),created=S.get("created",""))
 for x in S.get("env",[]):E.setdefault(x["name"],x["value"])
 a=W+"/context";g=E["KINETIC_CONTEXT_URI"];get(g,a);x=hashlib.sha256()
 with open(a,"rb")as f:
  for c in iter(lambda:f.read(1<<20),b""):x.update(c)
 x=x.hexdigest();y=E.get("KINETIC_CONTEXT_SHA256","").lower()
 if x!=y:raise F(126,"context checksum mismatch: %s has sha256 %s, expected %s; the staged context is corrupt: delete it and run again"%(g,x,y))
 with open(a,"rb")as f:Z=f.read(4)==b"(\xb5/\xfd"
 z=None
 try:
  if Z and shutil.which("zstd"):z=sp.Popen(["zstd","-dcq",a],stdout=sp.PIPE);t=tarfile.open(fileobj=z.stdout,mode="r|")
  elif Z and sys.version_info<(3,14):raise F(126,"the context is tar.zst but the image has neither the zstd tool nor Python 3.14+; stage it as tar.gz")
  else:t=tarfile.open(a)
  def safe(t):
   for m in t:
    if m.name.startswith("/")or".."in m.name.split("/")or not(m.isfile()or m.isdir()or m.issym())or m.issym()and(m.linkname.startswith("/")or".."in m.linkname.split("/")):raise F(126,"refusing to unpack the context: unsafe entry "+m.name)
    yield m
  with t:t.extractall(C,**({"filter":"data"}if hasattr(tarfile,"data_filter")else{"members":safe(t)}))
  if z and z.wait():raise F(126,"cannot decompress the context (zstd exit %d)"%z.returncode)
 except(tarfile.TarError,OSError)as e:raise F(126,"cannot unpack the context: %s"%e)
 b,n=split(R+"checkpoints/");k=""
 try:
  while 1:
   d=json.load(call("GET","/storage/v1/b/%s/o?prefix=%s%s"%(b,q(n),k and"&pageToken="+q(k))))
   for i in d.get("items",[]):
    c=i["name"][len(n):];p=os.path.join(K,c)
    if c and c[-1]!="/"and c[0]!="/"and".."not in c.split("/"):
     os.makedirs(os.path.dirname(p),exist_ok=True);get("gs://%s/%s"%(b,i["name"]),p)
     if"updated"in i:u=D.datetime.fromisoformat(i["updated"].replace("Z","+00:00")).timestamp();os.utime(p,(u,u))
     s=os.stat(p);M[c]=s.st_size,s.st_mtime_ns
   k=d.get("nextPageToken")
   if not k:break
 except NET as e:raise F(126,"cannot fetch the checkpoints in %scheckpoints/: %s"%(R,e))
 f=os.path.join(C,S["file"]);cwd=os.path.join(C,S.get("workdir")or"");k=S.get("kind")
 if not os.path.isfile(f)or not os.path.isdir(cwd):raise F(127,"%s is not in the context"%(S["file"]if os.path.isdir(cwd)else"the working directory "+S["workdir"]))
 P[2]=1;c={"python":["python3","-u",f],"shell":["bash",f]}.get(k,[f])
 if k=="cpp":
  c=[W+"/job"];r=run(["g++","-O2","-std=c++20","-o",c[0],f],cwd)
  if r:raise F(128-r if r<0 else r,"compiling %s failed (g++ exit %d)"%(S["file"],r))
 r=run(c+S.get("args",[]),cwd)
 st.update(state="failed"if r else"succeeded",exit_code=128-r if r<0 else r,error=r and("job killed by "+signal.Signals(-r).name if r<0 else"job exited with code %d"%r)or"")
except Stop:pass
except F as e:st.update(exit_code=e.args[0],error=e.args[1])
except Exception as e:st.update(error="%s: %s"%(type(e).__name__,e))
ran=P[2];P[2]=2
if P[1]:st.update(state="cancelled",exit_code=128+P[1],error="cancelled: got "+signal.Signals(P[1]).name+(st["error"]and"; "+st["error"]))
if st["error"]:say(st["error"])
def keep(w,f):
 try:f()
 except Exception as e:say("uploading %s failed: %s"%(w,e));st["error"]=st["error"]or"uploading %s failed: %s"%(w,e)
def ck():
 for r,_,fs in os.walk(K):
  for n in fs:
   p=os.path.join(r,n);c=os.path.relpath(p,K);s=os.lstat(p)
   if stat.S_ISREG(s.st_mode)and M.get(c)!=(s.st_size,s.st_mtime_ns):put(R+"checkpoints/"+c,p)
def out():
 with tarfile.open(W+"/outputs.tar.gz","w:gz",compresslevel=3)as t:
  t.inodes=type("I",(dict,),{"__contains__":lambda*a:0})()
  t.add(O,".",filter=lambda i:i if i.isfile()or i.isdir()or i.issym()else None)
 put(R+"outputs.tar.gz",W+"/outputs.tar.gz","application/gzip")
if ran:keep("checkpoints",ck)
keep("outputs",out)
st.update(finished=now(),duration_seconds=round(time.time()-t0,3))
def fin():
 with open(W+"/status.json","w")as f:json.dump(st,f)
 put(R+"status.json",W+"/status.json","application/json")
keep("status.json",fin)
shutil.rmtree(W,ignore_errors=True)
sys.exit(st["exit_code"])
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
          {"KINETIC_RESULTS_URI",
           results_uri.empty() || results_uri.back() == '/' ? results_uri : results_uri + "/"}};
}

}  // namespace kinetic
