#include "k8s/port_forward.h"

#include <random>

#include "core/strings.h"
#include "k8s/ws_dial.h"

namespace kinetic::k8s {
namespace {

// A client's frames are masked (RFC 6455 §5.3); the mask need not be secret from the server.
std::array<uint8_t, 4> forward_frame_mask() {
  thread_local std::mt19937 rng(std::random_device{}());
  std::array<uint8_t, 4> m{};
  for (auto& b : m) b = static_cast<uint8_t>(rng());
  return m;
}

}  // namespace

std::string port_forward_path(const std::string& ns, const std::string& pod,
                              const std::vector<int>& ports) {
  std::string list;
  for (int p : ports) list += (list.empty() ? "" : ",") + std::to_string(p);
  return "/api/v1/namespaces/" + percent_encode(ns) + "/pods/" + percent_encode(pod) +
         "/portforward?ports=" + percent_encode(list);
}

std::string port_prefix(uint16_t port) {
  return {static_cast<char>(port & 0xFF), static_cast<char>(port >> 8)};
}

std::string port_data_message(size_t index, std::string_view data) {
  std::string m(1, static_cast<char>(index * 2));
  return m.append(data);
}

PortForwardDecoder::PortForwardDecoder(std::vector<int> ports)
    : ports_(std::move(ports)), prefix_left_(ports_.size() * 2) {
  for (size_t channel = 0; channel < prefix_left_.size(); ++channel)
    prefix_left_[channel] = port_prefix(static_cast<uint16_t>(ports_[channel / 2]));
}

PortForwardEvent PortForwardDecoder::decode(std::string_view message) {
  if (message.empty()) return {};
  const auto channel = static_cast<unsigned char>(message[0]);
  if (channel >= prefix_left_.size())
    throw ws::ProtocolError("port-forward: a message on channel " + std::to_string(channel) +
                            " for " + std::to_string(ports_.size()) + " port(s)");
  message.remove_prefix(1);
  // The prefix may come split over messages; each byte must be the port's.
  std::string& left = prefix_left_[channel];
  while (!left.empty() && !message.empty()) {
    if (message[0] != left[0])
      throw ws::ProtocolError("port-forward: channel " + std::to_string(channel) +
                              " does not start with port " + std::to_string(ports_[channel / 2]));
    left.erase(0, 1);
    message.remove_prefix(1);
  }
  if (message.empty()) return {};
  return {channel % 2 == 0 ? PortForwardEvent::data : PortForwardEvent::error,
          static_cast<size_t>(channel / 2), std::string(message)};
}

PortForwardStream::PortForwardStream(std::unique_ptr<http::UpgradedConnection> connection,
                                     std::string early, int port)
    : connection_(std::move(connection)), decoder_({port}) {
  reader_.feed(early);
}

void PortForwardStream::send_frame(ws::Opcode op, std::string_view payload) {
  connection_->send(ws::encode_frame(op, payload, true, forward_frame_mask()));
}

void PortForwardStream::send(std::string_view data) {
  // Messages well under the kubelet's limits, so a large write is no single huge frame.
  constexpr size_t kChunk = 256 * 1024;
  while (!data.empty()) {
    const size_t n = std::min(kChunk, data.size());
    send_frame(ws::Opcode::binary, port_data_message(0, data.substr(0, n)));
    data.remove_prefix(n);
  }
}

void PortForwardStream::close() {
  if (close_sent_ || ended_) return;
  close_sent_ = true;
  send_frame(ws::Opcode::close, ws::close_payload(1000));
}

std::string PortForwardStream::take_messages() {
  std::string out;
  while (auto m = reader_.next()) {
    switch (m->opcode) {
      case ws::Opcode::binary: {
        PortForwardEvent e = decoder_.decode(m->payload);
        if (e.kind == PortForwardEvent::data) out += e.bytes;
        if (e.kind == PortForwardEvent::error) error_ += e.bytes;
        break;
      }
      case ws::Opcode::ping:
        send_frame(ws::Opcode::pong, m->payload);
        break;
      case ws::Opcode::close:
        // The answer is a courtesy: a server that closed its side already cannot take it.
        try {
          if (!close_sent_) send_frame(ws::Opcode::close, m->payload.substr(0, 2));
        } catch (const std::exception&) {
        }
        close_sent_ = true;
        ended_ = true;
        return out;
      default:
        break;
    }
  }
  return out;
}

std::optional<std::string> PortForwardStream::receive() {
  if (ended_) return std::nullopt;
  // What came with the 101 (early bytes) first.
  std::string out = take_messages();
  bool connection_closed = false;
  // A bounded amount a call, passed on before more is read (the caller calls again until "").
  constexpr size_t kMaxReceive = 64 * 1024;
  while (!ended_ && out.size() < kMaxReceive) {
    std::optional<std::string> got = connection_->receive();
    if (!got) {
      connection_closed = true;
      break;
    }
    if (got->empty()) break;
    reader_.feed(*got);
    out += take_messages();
  }
  if (connection_closed) ended_ = true;
  // What came before the end is delivered first; the end on the next call.
  if (ended_ && out.empty()) return std::nullopt;
  return out;
}

std::unique_ptr<PortForwardStream> open_port_forward(const std::string& server,
                                                     const std::string& ca_pem,
                                                     auth::TokenProvider& credentials,
                                                     const std::string& ns, const std::string& pod,
                                                     int port, int verbosity) {
  WebSocketSession session = dial_websocket(
      server, ca_pem, credentials, port_forward_path(ns, pod, {port}), {kPortForwardProtocol},
      "port-forward to port " + std::to_string(port) + " of pod " + pod, verbosity);
  return std::make_unique<PortForwardStream>(std::move(session.connection),
                                             std::move(session.early_bytes), port);
}

}  // namespace kinetic::k8s
