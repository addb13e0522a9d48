using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Mqtt;
using Courier.Actors.Server.Authentication;

namespace Courier.Actors.Connections;

/// <summary>What an MQTT client (<see cref="MqttConnection"/>) uses beyond <see cref="ConnectionContext"/>, made when the broker has started.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Authentication">CONNECT's check (user and password, certificates).</param>
/// <param name="Tls">The MQTT listener's <c>tls { }</c>, if any.</param>
/// <param name="Sessions">The session registry a CONNECT attaches to.</param>
/// <param name="Captures">The persistent sessions' capture barrier (PUBACK after their journal write).</param>
/// <param name="Retained">The retained messages, in memory.</param>
/// <param name="RetainedStore">Journals retained messages.</param>
/// <param name="ActivateAccount">Starts an account's JetStream when its first client connects (operator mode).</param>
internal sealed record MqttContext(
    ConnectionContext Node,
    Authenticator Authentication,
    TlsTransport? Tls,
    IActorRef Sessions,
    MqttCaptureLedger Captures,
    MqttRetainedMessages Retained,
    IActorRef RetainedStore,
    Func<Account, Task> ActivateAccount);
