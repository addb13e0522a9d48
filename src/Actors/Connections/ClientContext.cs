using Courier.Actors.Accounts;
using Courier.Actors.Server;
using Courier.Actors.Server.Authentication;

namespace Courier.Actors.Connections;

/// <summary>What a NATS client (<see cref="ClientConnection"/>) uses beyond <see cref="ConnectionContext"/>, made when the broker has started.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Authentication">CONNECT's check: users, nkeys, JWTs, certificates.</param>
/// <param name="Info">The INFO a client gets.</param>
/// <param name="Tls">The client listener's <c>tls { }</c>, if any.</param>
/// <param name="Trust">Operator mode (a WebSocket cookie's JWT), if configured.</param>
/// <param name="Events">The system account's CONNECT/DISCONNECT events, if there is a system account.</param>
/// <param name="ActivateAccount">Starts an account's JetStream when its first client connects.</param>
internal sealed record ClientContext(
    ConnectionContext Node,
    Authenticator Authentication,
    ClientInfo Info,
    TlsTransport? Tls,
    Server.Identity.OperatorTrust? Trust,
    Events.SystemEvents? Events,
    Func<Account, Task> ActivateAccount);
