using System.Buffers;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using Akka.Actor;
using Courier.Actors.Mqtt;
using Courier.Actors.Routing;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>
/// An MQTT 3.1.1 client (the gateway of DESIGN.md §1): the same outbound, write pump, subscriptions and
/// publish pipeline as a NATS client, with MQTT packets on the wire. PUBLISH goes through the
/// <see cref="Publisher"/> with nats-server's Nmqtt-Pub header; deliveries to an MQTT subscriber are
/// written as PUBLISH packets by the publisher's thread (<see cref="WriteMessage"/>), so no actor sees a
/// message. Its <see cref="MqttConnectionActor"/> owns its lifetime.
/// </summary>
internal sealed partial class MqttConnection : Connection
{

    // A topic with a character NATS subjects cannot carry (nats-server's error text).
    private const string TopicNotMappable = "characters ' ' and '.' not supported for MQTT topics";

    // mqtt.reject_qos2_publish: nats-server 2.10's text.
    private const string Qos2PublishDisabled = "QoS=2 is disabled for PUBLISH messages";

    // Subjects up to this many bytes map to a topic in a stack buffer on delivery; longer ones rent one.
    private const int StackSubjectLength = 240;

    private readonly MqttContext _context;
    private readonly MqttConnectionState _mqtt;
    private MqttStep _step; // what the last Process stopped at (see ContinueAsync)
    private readonly bool _rejectQos2Publish; // mqtt.reject_qos2_publish
    private readonly bool _downgradeQos2Subscribe; // mqtt.downgrade_qos2_subscribe

    private enum MqttStep
    {
        /// <summary>Everything complete was processed; read more.</summary>
        Continue,

        /// <summary>A CONNECT waits for authentication and its session.</summary>
        Connect,

        /// <summary>SUBSCRIBE/UNSUBSCRIBE changed subscriptions: make them effective, then ack.</summary>
        SubscriptionsChanged,

        /// <summary>An acknowledgement waits for a journal write (a retained QoS 1/2 PUBLISH, a persistent session's QoS 2 id).</summary>
        AwaitJournal,

        /// <summary>The connection must close (the reason is recorded).</summary>
        Close,
    }

    public MqttConnection(MqttContext context, Stream stream, Socket socket, ulong id, IActorRef owner)
        : base(context.Node, new Transport(stream, socket), id, owner, PublisherKind.Client)
    {
        // A PUBLISH may carry max_payload bytes plus its topic (up to 65535 + 2 bytes) and packet id.
        _context = context;
        var options = context.Node.Options;
        _mqtt = new MqttConnectionState(options.MaxPayload + ushort.MaxValue + 4)
        {
            Inflight = new MqttInflight(Outbound, options.Mqtt?.MaxAckPending ?? 0),
        };
        StorageTimeout = options.Mqtt?.JsApiTimeout ?? TimeSpan.FromSeconds(5);
        _rejectQos2Publish = options.Mqtt?.RejectQos2Publish ?? false;
        _downgradeQos2Subscribe = options.Mqtt?.DowngradeQos2Subscribe ?? false;
    }

    /// <summary>
    /// How long the client waits for the server's storage: a CONNECT for the session registry (then CONNACK
    /// 0x03, server unavailable), an acknowledgement for its journal write (then the close). <c>mqtt.js_api_timeout</c>.
    /// </summary>
    private TimeSpan StorageTimeout { get; }

    /// <inheritdoc />
    public override ConnectionKind Kind => ConnectionKind.Mqtt;

    /// <summary>An MQTT client whose CONNECT was accepted.</summary>
    public bool MqttConnected => _mqtt.Connected;

    /// <summary>The MQTT client id, once connected.</summary>
    public string? MqttClientId => _mqtt.ClientId;

    /// <summary>Starts the pumps (after the TLS handshake on a TLS MQTT listener): the server says nothing before the client's CONNECT.</summary>
    public override void Start()
    {
        if (!IsWebSocket && _context.Tls is { } tls)
        {
            // mqtt.tls: the handshake first (over WebSocket the listener's wss did it).
            _readPump = Task.Run(() => SecureAndRunAsync(tls));
            return;
        }

        _writePump = Task.Run(RunWritePumpAsync);
        _readPump = Task.Run(RunReadPumpAsync);
    }

    /// <summary>
    /// An MQTT client on a TLS MQTT listener, as nats-server's createMQTTClient: the server handshake
    /// first (MQTT sends nothing before CONNECT), then the pumps over the encrypted stream.
    /// </summary>
    /// <remarks>Runs on the thread pool as the read pump; the block's <c>timeout</c> bounds the handshake.</remarks>
    private async Task SecureAndRunAsync(TlsTransport tls)
    {
        if (await TrySecureAsync(tls, "mid", "TLS handshake error").ConfigureAwait(false))
        {
            _writePump = Task.Run(RunWritePumpAsync);
            await RunReadPumpAsync().ConfigureAwait(false);
        }
    }

    /// <inheritdoc />
    internal override ReadOutcome Process(ref ReadOnlySequence<byte> buffer)
    {
        _step = ProcessMqtt(ref buffer);
        if (_step == MqttStep.Close)
        {
            return ReadOutcome.Close;
        }

        return Publisher.ReachedAckHolder || _step != MqttStep.Continue ? ReadOutcome.Wait : ReadOutcome.Continue;
    }

    /// <summary>
    /// What a batch stopped for: the acknowledgements held for the persistent sessions' journal, a
    /// CONNECT's authentication and session, SUBSCRIBE/UNSUBSCRIBE in effect (then SUBACK), a journal write.
    /// </summary>
    internal override async ValueTask<ReadOutcome> ContinueAsync()
    {
        var step = _step;
        if (Publisher.ReachedAckHolder)
        {
            step = await AcknowledgeAfterCaptureAsync(step).ConfigureAwait(false);
        }

        if (step == MqttStep.Connect)
        {
            step = await CompleteMqttConnectAsync().ConfigureAwait(false);
        }
        else if (step == MqttStep.SubscriptionsChanged)
        {
            // Invariant 2: the subscriptions are in effect before SUBACK and before the next packet.
            await FlushSubscriptionChangesAsync().ConfigureAwait(false);
            step = await JournalSessionSubscriptionsAsync().ConfigureAwait(false);
            if (step == MqttStep.Continue)
            {
                WriteMqttAcks();
            }
        }
        else if (step == MqttStep.AwaitJournal)
        {
            step = await AcknowledgeAfterJournalAsync().ConfigureAwait(false);
        }

        return step == MqttStep.Continue ? ReadOutcome.Continue : ReadOutcome.Close;
    }

    /// <inheritdoc />
    private protected override void OnBatchProcessed() => TellMqttSessionAcks();

    /// <inheritdoc />
    private protected override void OnReadEnded()
    {
        var mqtt = _mqtt;
        if (mqtt.Will is { Delay: > 0 } will && mqtt.Connected && mqtt.Persistent && !mqtt.EndSessionAtClose && mqtt.Session is { } session)
        {
            // MQTT 5.0: the session that outlives this connection publishes the will after its Will Delay Interval,
            // or at its own end if sooner, unless the client connects again first. [MQTT-3.1.3-9]
            session.Tell(new MqttSessionActor.Protocol.DelayedWill(Owner, this, will.Delay), ActorRefs.NoSender);
            return;
        }

        PublishWill();
    }

    /// <summary>
    /// Publishes the will its session held for the Will Delay Interval (on the session's thread: this
    /// connection's read pump has ended, so nothing else uses its publisher). [MQTT-3.1.3.2.2]
    /// </summary>
    public void PublishDelayedWill() => PublishWill();

    /// <summary>
    /// The will waiting for its delay, as its session journals it (due at <paramref name="dueAt"/>, Unix ms), so
    /// that a restart keeps it; null when there is none or the client may not publish on its topic (it would
    /// never go out). On the session's thread, after this connection's read pump ended. [MQTT-3.1.3-9]
    /// </summary>
    public MqttJournaledWill? DelayedWillRecord(long dueAt)
    {
        var mqtt = _mqtt;
        if (mqtt.Will is not { } will || !mqtt.Connected || (Permissions is { } permissions && !permissions.CanPublish(will.Subject)))
        {
            return null;
        }

        return new MqttJournaledWill(will.Subject, will.Topic, will.Payload, will.QoS, will.Retain, will.Headers ?? [], dueAt);
    }

    /// <inheritdoc />
    private protected override void OnClosing() => _mqtt.Inflight.Close();

    /// <inheritdoc />
    private protected override void OnClosed() => ReleaseAccountAdmission();

    // One message per read batch to the persistent session, whatever the number of acks: the acks, and
    // the packet ids its deliveries were sent with (deliveries that waited for a window slot included).
    private void TellMqttSessionAcks()
    {
        var mqtt = _mqtt;
        if (mqtt.Persistent)
        {
            mqtt.Inflight.DrainAssigned(mqtt.AssignedIds);
            mqtt.Inflight.DrainExpired(mqtt.AckedSeqs);
        }

        if (mqtt.AckedSeqs.Count > 0 || mqtt.ReleasedIds.Count > 0 || mqtt.CompletedIds.Count > 0 || mqtt.AssignedIds.Count > 0)
        {
            mqtt.Session?.Tell(new MqttSessionActor.Protocol.Acked([.. mqtt.AckedSeqs], [.. mqtt.ReleasedIds], [.. mqtt.CompletedIds], [.. mqtt.AssignedIds]));
            mqtt.AckedSeqs.Clear();
            mqtt.ReleasedIds.Clear();
            mqtt.CompletedIds.Clear();
            mqtt.AssignedIds.Clear();
        }
    }

    /// <summary>Processes every complete packet in <paramref name="buffer"/>, slicing off what it consumed.</summary>
    private MqttStep ProcessMqtt(ref ReadOnlySequence<byte> buffer)
    {
        var mqtt = _mqtt;
        var reader = new SequenceReader<byte>(buffer);
        var packet = default(MqttPacket);
        var step = MqttStep.Continue;
        while (step == MqttStep.Continue)
        {
            var status = mqtt.Parser.TryRead(ref reader, ref packet, out var error);
            if (status == MqttReadStatus.NeedMoreData)
            {
                break;
            }

            if (status == MqttReadStatus.Error)
            {
                step = MqttProtocolError(error, packet.Type == MqttPacketType.Connect ? packet.ProtocolLevel : mqtt.Parser.ProtocolVersion);
                break;
            }

            switch (packet.Type)
            {
                case MqttPacketType.Connect:
                    step = BeginMqttConnect(in packet);
                    break;
                case MqttPacketType.Publish when packet.QoS == 2 && _rejectQos2Publish:
                    // mqtt.reject_qos2_publish, as nats-server 2.10; MQTT 5.0 says it with DISCONNECT 0x9B. [MQTT-3.2.2-11]
                    step = mqtt.Version == 5
                        ? MqttDisconnect(MqttReasonCode.QoSNotSupported, Qos2PublishDisabled)
                        : MqttFatal(Qos2PublishDisabled, "Protocol Violation");
                    break;
                case MqttPacketType.Publish:
                    step = mqtt.Version == 5 ? ProcessMqttPublishV5(in packet) : ProcessMqttPublish(in packet, default);
                    break;
                case MqttPacketType.PubAck or MqttPacketType.PubComp:
                    var complete = packet.Type == MqttPacketType.PubComp;
                    if (mqtt.Inflight.Acknowledge(packet.PacketId, complete, out var acked, out var sentMore))
                    {
                        if (acked > 0)
                        {
                            mqtt.AckedSeqs.Add(acked);
                        }

                        if (complete && mqtt.Persistent)
                        {
                            mqtt.CompletedIds.Add(packet.PacketId);
                        }
                    }

                    if (sentMore)
                    {
                        Publisher.Touch(Outbound); // deliveries that waited for a free slot went out
                    }

                    break;
                case MqttPacketType.PubRec:
                    // QoS 2 delivery, step 2: PUBREL back; the message is the client's now. [MQTT-4.3.3-1]
                    if (mqtt.Inflight.Received(packet.PacketId, out var received))
                    {
                        if (received > 0)
                        {
                            mqtt.AckedSeqs.Add(received);
                        }

                        if (mqtt.Persistent)
                        {
                            mqtt.ReleasedIds.Add(packet.PacketId);
                        }
                    }

                    Publisher.Touch(Outbound);
                    break;
                case MqttPacketType.PubRel:
                    // QoS 2 publish, step 3: the packet id may be used again; PUBCOMP even for an unknown id. [MQTT-4.3.3-2]
                    if (mqtt.Qos2Received.Remove(packet.PacketId) && mqtt.Persistent && mqtt.Session is { } session)
                    {
                        // A persistent session forgets the id in its journal first: PUBCOMP after that.
                        mqtt.PendingAck = (session.Ask<MqttSessionActor.Protocol.Qos2InStored>(
                            new MqttSessionActor.Protocol.Qos2In(packet.PacketId, Received: false), StorageTimeout), 0x70, packet.PacketId);
                        step = MqttStep.AwaitJournal;
                        break;
                    }

                    WriteAck(0x70, packet.PacketId);
                    break;
                case MqttPacketType.Subscribe:
                    step = ProcessMqttSubscribe(in packet);
                    break;
                case MqttPacketType.Unsubscribe:
                    step = ProcessMqttUnsubscribe(in packet);
                    break;
                case MqttPacketType.PingReq:
                    WriteOwn(MqttPacketWriter.PingResp); // [MQTT-3.12.4-1]
                    break;
                case MqttPacketType.Disconnect:
                    step = ProcessMqttDisconnect(in packet);
                    break;
                case MqttPacketType.Auth:
                    // No Authentication Method was agreed at CONNECT (one is refused there), so AUTH is a Protocol Error. [MQTT-4.12.0-1]
                    step = MqttDisconnect(MqttReasonCode.ProtocolError, "AUTH without an authentication method");
                    break;
                default:
                    step = MqttFatal($"protocol {(int)packet.Type} not supported", "Protocol Violation");
                    break;
            }
        }

        MarkActivity();
        buffer = buffer.Slice(reader.Position);
        return step;
    }

    // A packet the parser refused. MQTT 5.0: a CONNECT gets a CONNACK with the reason code, a later
    // packet a DISCONNECT with it [MQTT-4.13.1-1]; 3.1.1: a CONNACK only where the spec names a code.
    private MqttStep MqttProtocolError(MqttParseError error, byte version)
    {
        if (version == 5 && error != MqttParseError.FirstPacketNotConnect)
        {
            if (!_mqtt.Parser.ConnectReceived)
            {
                WriteConnAckV5(error.ReasonCode(), sessionPresent: false, default);
                return MqttFatal(error.ToString(), "Protocol Violation");
            }

            return MqttDisconnect(error.ReasonCode(), error.ToString());
        }

        if (error.ConnAckCode() is { } code)
        {
            WriteConnAck(code, sessionPresent: false);
        }

        return MqttFatal(error.ToString(), "Protocol Violation");
    }

    // MQTT 5.0: DISCONNECT with a reason code (and the reason as a Reason String), then close this client only. [MQTT-4.13.2-1]
    private MqttStep MqttDisconnect(MqttReasonCode code, string reason)
    {
        var output = new ArrayBufferWriter<byte>(64);
        MqttPacketWriter.WriteDisconnect(output, code, Encoding.UTF8.GetBytes(reason));
        WriteOwn(output.WrittenSpan);
        return MqttFatal(reason, "Protocol Violation");
    }

    private MqttStep MqttFatal(string error, string reason)
    {
        LogProtocolError("MQTT: " + error);
        CloseWith(reason);
        return MqttStep.Close;
    }

    // CONNECT: the parser checked the fields; what is left needs strings, auth and the session.
    private MqttStep BeginMqttConnect(in MqttPacket packet)
    {
        var v5 = packet.ProtocolLevel == 5;
        _mqtt.Version = packet.ProtocolLevel;
        if (packet.HasUserName && packet.UserName.IsEmpty)
        {
            // nats-server: "empty user name not allowed", CONNACK 0x04.
            RefuseConnect(MqttConnectReturnCode.BadUserNameOrPassword, MqttReasonCode.BadUserNameOrPassword);
            return MqttFatal("empty user name not allowed", "Authentication Failure");
        }

        var connect = v5 ? ReadConnectProperties(packet.Properties) : default;
        if (connect.Refusal is { } refusal)
        {
            WriteConnAckV5(refusal.Code, sessionPresent: false, default, refusal.Reason);
            return MqttFatal(refusal.Reason, "Protocol Violation");
        }

        MqttWill? will = null;
        if (packet.HasWill && packet.WillQoS == 2 && _rejectQos2Publish)
        {
            // mqtt.reject_qos2_publish: a QoS 2 will is refused, as nats-server 2.10 (3.1.1: its return code 0x10;
            // 5.0: 0x9B, QoS not supported [MQTT-3.2.2-12]).
            if (v5)
            {
                WriteConnAckV5(MqttReasonCode.QoSNotSupported, sessionPresent: false, default, Qos2PublishDisabled);
            }
            else
            {
                WriteConnAck(MqttConnectReturnCode.Qos2WillRejected, sessionPresent: false);
            }

            return MqttFatal("QoS=2 is disabled for the will", "Protocol Violation");
        }

        if (packet.HasWill)
        {
            var subject = new byte[MqttTopics.MaxSubjectLength(packet.WillTopic.Length)];
            if (MqttTopics.TryTopicToSubject(packet.WillTopic, subject, out var length) != MqttTopicError.None)
            {
                if (v5)
                {
                    WriteConnAckV5(MqttReasonCode.TopicNameInvalid, sessionPresent: false, default, TopicNotMappable);
                }

                return MqttFatal(TopicNotMappable, "Protocol Violation");
            }

            byte[]? headers = null;
            if (v5)
            {
                // [MQTT-3.1.3.2]: the will's properties travel with it, as a PUBLISH's do.
                var headerLength = MqttNatsHeaders.HeaderLinesLength(packet.WillProperties);
                if (headerLength < 0)
                {
                    WriteConnAckV5(MqttReasonCode.ImplementationSpecificError, sessionPresent: false, default, UnrepresentableProperty);
                    return MqttFatal(UnrepresentableProperty, "Protocol Violation");
                }

                headers = new byte[headerLength];
                MqttNatsHeaders.WriteHeaderLines(packet.WillProperties, headers);
            }

            // A Will Delay Interval makes the will wait for it, or for the session's end if sooner (MqttSessionActor).
            will = new MqttWill(subject[..length], packet.WillTopic.ToArray(), packet.WillMessage.ToArray(), packet.WillQoS, packet.WillRetain, headers, v5 ? WillDelay(packet.WillProperties) : 0);
        }

        // [MQTT-3.1.3-6]: an empty client id (with a clean session in 3.1.1) gets one from the server.
        var assigned = packet.ClientId.IsEmpty;
        var clientId = assigned ? NewMqttClientId() : Encoding.UTF8.GetString(packet.ClientId);
        _mqtt.PendingConnect = new MqttPendingConnect(
            clientId,
            packet.CleanSession,
            packet.KeepAlive,
            packet.HasUserName ? Encoding.UTF8.GetString(packet.UserName) : null,
            packet.HasPassword ? Encoding.UTF8.GetString(packet.Password) : null,
            will,
            packet.ProtocolLevel,
            connect.SessionExpiry,
            assigned,
            connect.ReceiveMaximum,
            connect.MaxPacketSize,
            connect.RequestResponseInformation,
            connect.TopicAliasMaximum);
        return MqttStep.Connect;
    }

    private async Task<MqttStep> CompleteMqttConnectAsync()
    {
        var mqtt = _mqtt;
        var connect = mqtt.PendingConnect!;
        mqtt.PendingConnect = null;
        var auth = _context.Authentication.AuthenticateMqtt(connect.User, connect.Password, ClientCertificate, RemoteIp, IsWebSocket);
        if (!auth.Succeeded)
        {
            // nats-server's authViolation for MQTT: CONNACK 0x05 (5.0: 0x87), then close.
            RefuseConnect(MqttConnectReturnCode.NotAuthorized, MqttReasonCode.NotAuthorized);
            return MqttFatal("Authorization Violation", "Authentication Failure");
        }

        if (await EnterAccountAsync(auth, (connect.User, connect.Password)).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }

        // MQTT 5.0 [MQTT-3.1.2-4], [MQTT-3.1.2-5]: Clean Start discards a kept session; the Session Expiry
        // Interval says whether this one is kept. A kept session (interval > 0) is kept until a clean start
        // (CONNACK says 0xFFFFFFFF); Clean Start 0 with interval 0 resumes a kept session, which then ends
        // with this connection [MQTT-3.1.2-11]; Clean Start 1 with interval 0 is 3.1.1's clean session.
        var endAtClose = connect.Version == 5 && connect.SessionExpiry == 0 && !connect.CleanSession;
        var persistent = connect.Version == 5 ? connect.SessionExpiry > 0 || endAtClose : !connect.CleanSession;
        var discardFirst = connect.Version == 5 && persistent && connect.CleanSession;
        MqttSessions.Protocol.Attached attached;
        try
        {
            if (discardFirst)
            {
                await _context.Sessions
                    .Ask<MqttSessions.Protocol.Attached>(new MqttSessions.Protocol.Attach(connect.ClientId, true, Owner, this, Account), StorageTimeout)
                    .ConfigureAwait(false);
            }

            attached = await _context.Sessions
                .Ask<MqttSessions.Protocol.Attached>(new MqttSessions.Protocol.Attach(connect.ClientId, !persistent, Owner, this, Account), StorageTimeout)
                .ConfigureAwait(false);
        }
        catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
        {
            RefuseConnect(MqttConnectReturnCode.ServerUnavailable, MqttReasonCode.ServerUnavailable);
            return MqttFatal("the session registry did not answer", "Server Unavailable");
        }

        mqtt.ClientId = connect.ClientId;
        mqtt.Will = connect.Will;
        mqtt.Session = attached.Session;
        mqtt.Persistent = persistent;
        if (connect.Version == 5)
        {
            mqtt.SessionExpiry = persistent && !endAtClose ? connect.SessionExpiry : 0; // kept that long after the connection ends
            mqtt.EndSessionAtClose = endAtClose;
            mqtt.ClientMaxPacketSize = connect.MaxPacketSize;
            mqtt.Inflight.UseVersion5(connect.ReceiveMaximum, connect.MaxPacketSize, connect.TopicAliasMaximum);
        }
        if (attached.Subscriptions.Count > 0)
        {
            // A persistent session's subscriptions are in effect again before CONNACK. [MQTT-3.1.2-4]
            foreach (var subscription in attached.Subscriptions)
            {
                AddMqttFilter(subscription);
            }

            await FlushSubscriptionChangesAsync().ConfigureAwait(false);
        }

        mqtt.Connected = true;
        // The JWT of an operator-mode login (the password) is kept as a NATS client's, so that a pushed account JWT
        // revoking its user closes this client too (Events.ClaimsUpdates).
        ConnectOptions = new ConnectOptions { Name = connect.ClientId, User = connect.User, Lang = "mqtt", Jwt = JwtAccount is null ? null : connect.Password };
        if (connect.Version == 5)
        {
            WriteConnAckV5(MqttReasonCode.Success, attached.SessionPresent, ConnAckProperties(connect));
        }
        else
        {
            WriteConnAck(MqttConnectReturnCode.Accepted, attached.SessionPresent);
        }

        // What the session kept goes out again after CONNACK [MQTT-4.4.0-1]: PUBRELs of QoS 2 deliveries past
        // PUBREC with their packet ids, then the stored messages; then the session sends what it stores from now on.
        mqtt.Qos2Received.UnionWith(attached.Qos2Received);
        foreach (var id in attached.Released)
        {
            mqtt.Inflight.RestoreReleased(id);
        }

        DeliverFromMqttSession(attached.Pending, attached.PacketIds);
        if (attached.Released.Count > 0)
        {
            Outbound.Signal();
        }

        if (mqtt.Persistent)
        {
            // The ids just given go to the session before the client can see them, so before any later CONNECT.
            TellMqttSessionAcks();
            attached.Session.Tell(new MqttSessionActor.Protocol.Ready(Owner));
            if (mqtt.EndSessionAtClose)
            {
                attached.Session.Tell(new MqttSessionActor.Protocol.End(Owner)); // MQTT 5.0 Session Expiry Interval 0
            }
            else
            {
                // How long the session outlives this connection: 3.1.1 and 0xFFFFFFFF never end. [MQTT-3.1.2-23]
                attached.Session.Tell(new MqttSessionActor.Protocol.Expiry(Owner, connect.Version == 5 ? mqtt.SessionExpiry : uint.MaxValue));
            }
        }

        Owner.Tell(new MqttConnectionActor.Protocol.Connected(TimeSpan.FromSeconds(connect.KeepAlive)));
        return MqttStep.Continue;
    }

    // A QoS 1/2 PUBLISH of this batch reached a persistent session's capture subscription (online or
    // offline): its PUBACK/PUBREC, and the ones after it, go once the sessions journaled it, so that a
    // kill -9 right after the PUBACK loses nothing [MQTT-4.3.2-2 "treat as owning"]. One barrier per batch.
    private async Task<MqttStep> AcknowledgeAfterCaptureAsync(MqttStep step)
    {
        var mqtt = _mqtt;
        Publisher.ReachedAckHolder = false;
        Publisher.Flush(); // completes the capture subscriptions reached: their sessions get the messages to journal
        try
        {
            await _context.Captures.WaitForCapturedAsync().WaitAsync(StorageTimeout).ConfigureAwait(false);
        }
        catch (Exception e) when (e is TimeoutException or TaskCanceledException)
        {
            mqtt.DeferredAcks.Clear();
            return MqttFatal("the persistent sessions did not journal a message", "Server Unavailable");
        }

        foreach (var (type, packetId, reason) in mqtt.DeferredAcks)
        {
            WriteAck(type, packetId, reason);
        }

        mqtt.DeferredAcks.Clear();
        return step;
    }

    // Acknowledged once journaled: a retained QoS 1/2 PUBLISH survives a restart after its PUBACK, a
    // persistent session's QoS 2 packet id after its PUBREC (and its release after PUBCOMP).
    private async Task<MqttStep> AcknowledgeAfterJournalAsync()
    {
        var mqtt = _mqtt;
        var (stored, ackType, packetId) = mqtt.PendingAck!.Value;
        mqtt.PendingAck = null;
        try
        {
            await stored.ConfigureAwait(false);
        }
        catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
        {
            return MqttFatal("the journal did not answer", "Server Unavailable");
        }

        WriteAck(ackType, packetId);
        return MqttStep.Continue;
    }

    // A persistent session journals SUBSCRIBE/UNSUBSCRIBE (and makes its capture subscriptions) before the acks go out.
    private async Task<MqttStep> JournalSessionSubscriptionsAsync()
    {
        var mqtt = _mqtt;
        if (!mqtt.Persistent || mqtt.Session is not { } session || (mqtt.SessionSubscribes.Count == 0 && mqtt.SessionUnsubscribes.Count == 0))
        {
            mqtt.SessionSubscribes.Clear();
            mqtt.SessionUnsubscribes.Clear();
            return MqttStep.Continue;
        }

        try
        {
            if (mqtt.SessionUnsubscribes.Count > 0)
            {
                await session.Ask<MqttSessionActor.Protocol.SubscriptionsDone>(new MqttSessionActor.Protocol.Unsubscribe([.. mqtt.SessionUnsubscribes]), StorageTimeout).ConfigureAwait(false);
            }

            if (mqtt.SessionSubscribes.Count > 0)
            {
                await session.Ask<MqttSessionActor.Protocol.SubscriptionsDone>(new MqttSessionActor.Protocol.Subscribe([.. mqtt.SessionSubscribes]), StorageTimeout).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
        {
            return MqttFatal("the session did not journal its subscriptions", "Server Unavailable");
        }
        finally
        {
            mqtt.SessionSubscribes.Clear();
            mqtt.SessionUnsubscribes.Clear();
        }

        return MqttStep.Continue;
    }

    /// <summary>
    /// Sends messages a persistent session kept (on the session actor's thread, or at CONNECT)
    /// through the in-flight window, to a 5.0 client with their properties; their acknowledgements go
    /// back to the session. Not the data path: a journaled message already cost allocations. A message sent on
    /// an earlier connection goes again with its packet id and DUP (<paramref name="packetIds"/>, by
    /// session sequence). [MQTT-4.4.0-1]
    /// </summary>
    public void DeliverFromMqttSession(IReadOnlyList<MqttStoredMessage> messages, IReadOnlyDictionary<long, ushort>? packetIds = null)
    {
        var mqtt = _mqtt;
        if (messages.Count == 0)
        {
            return;
        }

        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        foreach (var message in messages)
        {
            var previousId = packetIds is not null && packetIds.TryGetValue(message.Seq, out var id) ? id : (ushort)0;
            var payload = new ReadOnlySequence<byte>(message.Payload);
            if (mqtt.Version != 5 || (message.Headers is not { Length: > 0 } && message.SubscriptionId == 0))
            {
                mqtt.Inflight.Send(message.Topic, payload, retain: message.Retain, message.QoS, message.Seq, previousId);
                continue;
            }

            // MQTT 5.0: the properties it was published with, its Message Expiry Interval now the time it has
            // left [MQTT-3.3.2-6], and the identifier of the subscription that kept it. [MQTT-3.3.4-3]
            var headers = message.Headers ?? [];
            var headerProperties = MqttNatsHeaders.PropertiesLength(headers);
            var properties = new byte[headerProperties + MqttProperties.SubscriptionIdentifierSize(message.SubscriptionId)];
            MqttNatsHeaders.WriteProperties(headers, properties);
            MqttProperties.WriteSubscriptionIdentifier(properties.AsSpan(headerProperties), message.SubscriptionId);
            if (message.ExpiresAt != 0)
            {
                var left = (uint)Math.Max(0, (message.ExpiresAt - now + 999) / 1000); // whole seconds, rounded up
                MqttProperties.TrySetUInt32(properties, MqttPropertyId.MessageExpiryInterval, left);
            }

            mqtt.Inflight.Send(message.Topic, payload, retain: message.Retain, message.QoS, message.Seq, previousId, properties);
        }

        Outbound.Signal();
    }

    /// <summary>Moves the packet ids given to session deliveries since the last call into <paramref name="into"/> (the session's thread).</summary>
    public void DrainMqttAssignedIds(List<(long Seq, ushort PacketId)> into) => _mqtt.Inflight.DrainAssigned(into);

    /// <summary>Sends again, with DUP (or the PUBREL), the QoS 1/2 deliveries unacknowledged for <paramref name="ackWait"/> (the connection actor's tick).</summary>
    public void RedeliverMqtt(TimeSpan ackWait)
    {
        if (_mqtt.Inflight.RedeliverExpired(ackWait) > 0)
        {
            Outbound.Signal();
        }
    }

    /// <summary>
    /// Delivers one message to this MQTT client as a PUBLISH, on the publisher's thread: the subject
    /// mapped back to a topic, NATS headers left out, QoS the lower of the publisher's and the
    /// subscription's. Allocates nothing. An MQTT 5.0 subscriber gets the NATS headers as properties
    /// (<see cref="MqttNatsHeaders"/>), and its subscription's No Local and Retain As Published apply.
    /// </summary>
    internal override bool WriteMessage(Subscription sub, ref MsgTemplates templates, in ReadOnlySequence<byte> payload, Publisher from)
    {
        var subject = templates.Subject;
        var headerSize = templates.HeaderSize;
        var publisherQoS = from.InboundQoS;
        var retainedPublish = from.InboundRetain;
        var body = headerSize > 0 ? payload.Slice(headerSize) : payload;
        if (publisherQoS > 0 && sub.MqttSessionCaptured)
        {
            return true; // its persistent session journals it and sends it (MqttSessionActor)
        }

        if (sub.MqttNoLocal && ReferenceEquals(from.Source, this))
        {
            return true; // [MQTT-3.8.3-3]
        }

        if (retainedPublish && _mqtt.CollectingRetained)
        {
            // The publisher holds the retained gate: this client's SUBSCRIBE is between effect and retained read.
            _mqtt.RetainedSeenLive.Add(Encoding.UTF8.GetString(subject));
        }

        var qos = Math.Min(publisherQoS, sub.MqttQoS);
        if (sub.MqttVersion5)
        {
            // A message without headers has HeaderSize -1 (a NATS PUB): no properties from it.
            var headers = headerSize > 0 ? payload.Slice(0, headerSize) : default;
            return WriteMessageV5(subject, templates.ReplyTo, headers, body, qos, retain: sub.MqttRetainAsPublished && retainedPublish, sub.MqttSubscriptionId);
        }

        var needed = subject.Length + MqttPacketWriter.MaxFixedHeaderLength + 2 + subject.Length + 2;
        byte[]? rented = null;
        var scratch = subject.Length <= StackSubjectLength
            ? stackalloc byte[(2 * StackSubjectLength) + MqttPacketWriter.MaxFixedHeaderLength + 4]
            : (rented = ArrayPool<byte>.Shared.Rent(needed));
        try
        {
            var topicLength = MqttTopics.SubjectToTopic(subject, scratch);
            var topic = scratch[..topicLength];
            if (qos > 0)
            {
                return _mqtt.Inflight.Send(topic, body, retain: false, qos); // kept until PUBACK / PUBCOMP
            }

            var header = scratch[subject.Length..];
            var headerLength = MqttPacketWriter.WritePublishHeader(header, topic, 0, retain: false, dup: false, 0, (int)body.Length);
            return Outbound.WriteFrame(header[..headerLength], body);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    private void WriteConnAck(MqttConnectReturnCode code, bool sessionPresent)
    {
        // CONNACK: 0x20 0x02 session-present return-code. [MQTT-3.2]
        ReadOnlySpan<byte> frame = [0x20, 0x02, sessionPresent && code == MqttConnectReturnCode.Accepted ? (byte)1 : (byte)0, (byte)code];
        WriteOwn(frame);
    }

    // PUBACK, PUBREC, PUBCOMP: the packet id; an MQTT 5.0 reason code other than Success after it. [MQTT-3.4.2.1]
    private void WriteAck(byte first, ushort packetId, byte reason = 0)
    {
        if (reason == 0)
        {
            ReadOnlySpan<byte> frame = [first, 0x02, (byte)(packetId >> 8), (byte)packetId];
            WriteOwn(frame);
            return;
        }

        ReadOnlySpan<byte> withReason = [first, 0x03, (byte)(packetId >> 8), (byte)packetId, reason];
        WriteOwn(withReason);
    }

    // nats-server assigns a NUID; any unique UTF-8 string will do. [MQTT-3.1.3-6]
    private static string NewMqttClientId() => "courier-" + Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(11));
}
