// Times pinocchio::aba and MuJoCo's mj_forward from C++ on states written by benchmarks/run.py.
//
// model file (text):  njoints, gravity(3), then per joint:
//   type parent  R(9, row major) p(3)  mass com(3) Ic(9)  [axis(3) for RU / PU]
//   type: FF (free-flyer), RX RY RZ RU (revolute), PX PY PZ PU (prismatic), SP (spherical)
// states file: n nq nv, then n lines of q (Pinocchio's convention), n of v, n of tau.
// mj states file (optional): n nq nv, then qpos, qvel, qfrc_applied in MuJoCo's convention.
// Output: "aba_ns <median ns per call>" and "mj_forward_ns <...>".
#include <pinocchio/multibody.hpp>
#include <pinocchio/algorithm/aba.hpp>
#ifdef WITH_MUJOCO
#include <mujoco/mujoco.h>
#endif
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace pinocchio;

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  if (argc < 3) { std::cerr << "usage: peers_bench model.txt states.txt [model.xml mjstates.txt]\n"; return 2; }
  std::ifstream mf(argv[1]);
  int nj; mf >> nj;
  Model model;
  double g[3]; mf >> g[0] >> g[1] >> g[2];
  model.gravity.linear() << g[0], g[1], g[2];
  model.gravity.angular().setZero();
  std::vector<JointIndex> ids;
  for (int i = 0; i < nj; ++i) {
    std::string type; int parent; mf >> type >> parent;
    Eigen::Matrix3d R; Eigen::Vector3d p, c; Eigen::Matrix3d Ic; double m;
    for (int r = 0; r < 3; ++r) for (int k = 0; k < 3; ++k) mf >> R(r, k);
    mf >> p[0] >> p[1] >> p[2] >> m >> c[0] >> c[1] >> c[2];
    for (int r = 0; r < 3; ++r) for (int k = 0; k < 3; ++k) mf >> Ic(r, k);
    Eigen::Vector3d ax(0, 0, 1);
    if (type == "RU" || type == "PU") mf >> ax[0] >> ax[1] >> ax[2];
    JointIndex pid = parent < 0 ? 0 : ids[parent];
    SE3 M(R, p);
    std::string name = "j" + std::to_string(i);
    JointIndex jid;
    if (type == "FF") jid = model.addJoint(pid, JointModelFreeFlyer(), M, name);
    else if (type == "SP") jid = model.addJoint(pid, JointModelSpherical(), M, name);
    else if (type == "RX") jid = model.addJoint(pid, JointModelRX(), M, name);
    else if (type == "RY") jid = model.addJoint(pid, JointModelRY(), M, name);
    else if (type == "RZ") jid = model.addJoint(pid, JointModelRZ(), M, name);
    else if (type == "RU") jid = model.addJoint(pid, JointModelRevoluteUnaligned(ax), M, name);
    else if (type == "PX") jid = model.addJoint(pid, JointModelPX(), M, name);
    else if (type == "PY") jid = model.addJoint(pid, JointModelPY(), M, name);
    else if (type == "PZ") jid = model.addJoint(pid, JointModelPZ(), M, name);
    else if (type == "PU") jid = model.addJoint(pid, JointModelPrismaticUnaligned(ax), M, name);
    else { std::cerr << "unknown joint type " << type << "\n"; return 2; }
    model.appendBodyToJoint(jid, Inertia(m, c, Ic), SE3::Identity());
    ids.push_back(jid);
  }
  Data data(model);
  std::ifstream sf(argv[2]);
  int n, nq, nv; sf >> n >> nq >> nv;
  if (nq != model.nq || nv != model.nv) { std::cerr << "state sizes do not match the model\n"; return 2; }
  std::vector<Eigen::VectorXd> Q(n, Eigen::VectorXd(nq)), V(n, Eigen::VectorXd(nv)), T(n, Eigen::VectorXd(nv));
  for (auto& x : Q) for (int k = 0; k < nq; ++k) sf >> x[k];
  for (auto& x : V) for (int k = 0; k < nv; ++k) sf >> x[k];
  for (auto& x : T) for (int k = 0; k < nv; ++k) sf >> x[k];
  const int repeats = 15;
  double sink = 0;
  // first state printed so the caller can check the model
  aba(model, data, Q[0], V[0], T[0]);
  std::printf("aba_first");
  for (int k = 0; k < nv; ++k) std::printf(" %.17g", data.ddq[k]);
  std::printf("\n");
  std::vector<double> per;
  for (int r = 0; r < repeats + 2; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < n; ++s) { aba(model, data, Q[s], V[s], T[s]); sink += data.ddq[0]; }
    auto t1 = std::chrono::steady_clock::now();
    if (r >= 2) per.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
  }
  std::printf("aba_ns %.3f\n", median(per));
#ifdef WITH_MUJOCO
  if (argc >= 5) {
    char err[1000];
    mjModel* mm = mj_loadXML(argv[3], nullptr, err, 1000);
    if (!mm) { std::cerr << "mujoco: " << err << "\n"; return 3; }
    mjData* md = mj_makeData(mm);
    std::ifstream jf(argv[4]);
    int mn, mq, mv; jf >> mn >> mq >> mv;
    std::vector<double> QP(mn * mq), QV(mn * mv), QF(mn * mv);
    for (auto& x : QP) jf >> x;
    for (auto& x : QV) jf >> x;
    for (auto& x : QF) jf >> x;
    std::vector<double> perm;
    for (int r = 0; r < repeats + 2; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      for (int s = 0; s < mn; ++s) {
        mju_copy(md->qpos, &QP[s * mq], mq);
        mju_copy(md->qvel, &QV[s * mv], mv);
        mju_copy(md->qfrc_applied, &QF[s * mv], mv);
        mj_forward(mm, md);
        sink += md->qacc[0];
      }
      auto t1 = std::chrono::steady_clock::now();
      if (r >= 2) perm.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / mn);
    }
    std::printf("mj_forward_ns %.3f\n", median(perm));
    mj_deleteData(md);
    mj_deleteModel(mm);
  }
#endif
  std::fprintf(stderr, "sink %g\n", sink);
  return 0;
}
