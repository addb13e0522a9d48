using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using Akka.Actor;
using Courier.Actors.Mqtt;
using Courier.Actors.Routing;
using Courier.Protocols.Mqtt;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Connections;

/// <summary>
/// The MQTT 3.1.1 face of a connection (the gateway of DESIGN.md §1): the same outbound, write pump,
/// subscriptions and publish path as a NATS client, with MQTT packets on the wire. PUBLISH goes
/// through <see cref="ProcessPublish"/> with nats-server's Nmqtt-Pub header; deliveries to an MQTT
/// subscriber are written as PUBLISH packets by the publisher's thread (<see cref="WriteMqttDelivery"/>),
/// so no actor sees a message.
/// </summary>
internal sealed partial class ClientConnection
{
    // How long a CONNECT waits for the session registry before CONNACK 0x03 (server unavailable).
    private static readonly TimeSpan SessionAttachTimeout = TimeSpan.FromSeconds(5);

    // Subjects up to this many bytes map to a topic in a stack buffer on delivery; longer ones rent one.
    private const int StackSubjectLength = 240;

    private readonly MqttConnectionState? _mqtt;

    private enum MqttStep
    {
        /// <summary>Everything complete was processed; read more.</summary>
        Continue,

        /// <summary>A CONNECT waits for authentication and its session.</summary>
        Connect,

        /// <summary>SUBSCRIBE/UNSUBSCRIBE changed subscriptions: make them effective, then ack.</summary>
        SubscriptionsChanged,

        /// <summary>The connection must close (the reason is recorded).</summary>
        Close,
    }

    /// <summary>Whether this is an MQTT client.</summary>
    public bool IsMqtt => _mqtt is not null;

    /// <summary>An MQTT client whose CONNECT was accepted.</summary>
    public bool MqttConnected => _mqtt?.Connected == true;

    /// <summary>The MQTT client id, once connected.</summary>
    public string? MqttClientId => _mqtt?.ClientId;

    private async Task RunMqttReadPumpAsync()
    {
        // MQTT clients get no +OK and no pedantic checks.
        _verbose = false;
        _pedantic = false;
        var reader = PipeReader.Create(_stream, new StreamPipeReaderOptions(
            bufferSize: ReadBufferSize, minimumReadSize: MinimumReadSize, leaveOpen: true, useZeroByteReads: true));
        var closeReason = "Client Closed";
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync().ConfigureAwait(false);
                var buffer = result.Buffer;
                var step = MqttStep.Continue;
                try
                {
                    while (true)
                    {
                        step = ProcessMqtt(ref buffer);
                        if (step == MqttStep.Connect)
                        {
                            step = await CompleteMqttConnectAsync().ConfigureAwait(false);
                        }
                        else if (step == MqttStep.SubscriptionsChanged)
                        {
                            // Invariant 2: the subscriptions are in effect before SUBACK and before the next packet.
                            await FlushSubscriptionChangesAsync().ConfigureAwait(false);
                            WriteMqttAcks();
                            step = MqttStep.Continue;
                        }
                        else
                        {
                            break;
                        }

                        if (step != MqttStep.Continue)
                        {
                            break;
                        }
                    }

                    FlushTouched();
                }
                finally
                {
                    reader.AdvanceTo(buffer.Start, buffer.End);
                }

                if (_stalledOn.Count > 0)
                {
                    await WaitForStalledConsumersAsync().ConfigureAwait(false);
                }

                if (step == MqttStep.Close)
                {
                    closeReason = _closeRequest ?? "Protocol Error";
                    break;
                }

                if (result.IsCompleted || IsClosed)
                {
                    break;
                }
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
            closeReason = "Read Error";
        }
        finally
        {
            await reader.CompleteAsync().ConfigureAwait(false);
        }

        PublishWill();
        RequestClose(closeReason);
    }

    /// <summary>Processes every complete packet in <paramref name="buffer"/>, slicing off what it consumed.</summary>
    private MqttStep ProcessMqtt(ref ReadOnlySequence<byte> buffer)
    {
        var mqtt = _mqtt!;
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
                step = MqttProtocolError(error);
                break;
            }

            switch (packet.Type)
            {
                case MqttPacketType.Connect:
                    step = BeginMqttConnect(in packet);
                    break;
                case MqttPacketType.Publish:
                    step = ProcessMqttPublish(in packet);
                    break;
                case MqttPacketType.PubAck:
                    if (mqtt.Inflight.Acknowledge(packet.PacketId))
                    {
                        Touch(Outbound); // deliveries that waited for a free slot went out
                    }

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
                    // A normal disconnect discards the will. [MQTT-3.14.4-3]
                    mqtt.Will = null;
                    _closeRequest = "Client Closed";
                    step = MqttStep.Close;
                    break;
                default:
                    // PUBREC, PUBREL, PUBCOMP: QoS 2, which nats-server 2.9 does not support either.
                    step = MqttFatal($"protocol {(int)packet.Type} not supported", "Protocol Violation");
                    break;
            }
        }

        Volatile.Write(ref _lastActivityTick, Environment.TickCount64);
        buffer = buffer.Slice(reader.Position);
        return step;
    }

    private MqttStep MqttProtocolError(MqttParseError error)
    {
        if (error.ConnAckCode() is { } code)
        {
            WriteConnAck(code, sessionPresent: false);
        }

        return MqttFatal(error.ToString(), "Protocol Violation");
    }

    private MqttStep MqttFatal(string error, string reason)
    {
        Log.ProtocolError(_log, Id, "MQTT: " + error);
        _closeRequest = reason;
        return MqttStep.Close;
    }

    // CONNECT: the parser checked the fields; what is left needs strings, auth and the session.
    private MqttStep BeginMqttConnect(in MqttPacket packet)
    {
        if (packet.HasUserName && packet.UserName.IsEmpty)
        {
            // nats-server: "empty user name not allowed", CONNACK 0x04.
            WriteConnAck(MqttConnectReturnCode.BadUserNameOrPassword, sessionPresent: false);
            return MqttFatal("empty user name not allowed", "Authentication Failure");
        }

        MqttWill? will = null;
        if (packet.HasWill)
        {
            var subject = new byte[MqttTopics.MaxSubjectLength(packet.WillTopic.Length)];
            if (MqttTopics.TryTopicToSubject(packet.WillTopic, subject, out var length) != MqttTopicError.None)
            {
                return MqttFatal("characters ' ' and '.' not supported for MQTT topics", "Protocol Violation");
            }

            // nats-server 2.9 publishes a QoS 2 will as QoS 1 (it has no QoS 2).
            will = new MqttWill(subject[..length], packet.WillTopic.ToArray(), packet.WillMessage.ToArray(), Math.Min(packet.WillQoS, (byte)1), packet.WillRetain);
        }

        // [MQTT-3.1.3-6]: an empty client id with a clean session gets one from the server.
        var clientId = packet.ClientId.IsEmpty ? NewMqttClientId() : Encoding.UTF8.GetString(packet.ClientId);
        _mqtt!.PendingConnect = new MqttPendingConnect(
            clientId,
            packet.CleanSession,
            packet.KeepAlive,
            packet.HasUserName ? Encoding.UTF8.GetString(packet.UserName) : null,
            packet.HasPassword ? Encoding.UTF8.GetString(packet.Password) : null,
            will);
        return MqttStep.Connect;
    }

    private async Task<MqttStep> CompleteMqttConnectAsync()
    {
        var mqtt = _mqtt!;
        var connect = mqtt.PendingConnect!;
        mqtt.PendingConnect = null;
        var auth = _broker.AuthenticateMqtt(connect.User, connect.Password, ClientCertificate);
        if (!auth.Succeeded)
        {
            // nats-server's authViolation for MQTT: CONNACK 0x05, then close.
            WriteConnAck(MqttConnectReturnCode.NotAuthorized, sessionPresent: false);
            return MqttFatal("Authorization Violation", "Authentication Failure");
        }

        AuthorizedUser = auth.User;
        _permissions = auth.Permissions is null ? null : new ClientPermissions(auth.Permissions);
        DeliveryFilter = _permissions is { FiltersDeliveries: true } ? _permissions : null;

        MqttSessions.Protocol.Attached attached;
        try
        {
            attached = await _broker.MqttSessions
                .Ask<MqttSessions.Protocol.Attached>(new MqttSessions.Protocol.Attach(connect.ClientId, connect.CleanSession, _owner), SessionAttachTimeout)
                .ConfigureAwait(false);
        }
        catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
        {
            WriteConnAck(MqttConnectReturnCode.ServerUnavailable, sessionPresent: false);
            return MqttFatal("the session registry did not answer", "Server Unavailable");
        }

        mqtt.ClientId = connect.ClientId;
        mqtt.Will = connect.Will;
        mqtt.Connected = true;
        ConnectOptions = new ConnectOptions { Name = connect.ClientId, User = connect.User, Lang = "mqtt" };
        WriteConnAck(MqttConnectReturnCode.Accepted, attached.SessionPresent);
        _owner.Tell(new MqttConnectionActor.Protocol.Connected(TimeSpan.FromSeconds(connect.KeepAlive)));
        return MqttStep.Continue;
    }

    // PUBLISH: to the subject space with nats-server's Nmqtt-Pub header; PUBACK for QoS 1.
    private MqttStep ProcessMqttPublish(in MqttPacket packet)
    {
        var mqtt = _mqtt!;
        var qos = packet.QoS;
        if (qos > 1)
        {
            return MqttFatal("publish QoS=2 not supported", "Protocol Violation");
        }

        var buffer = mqtt.SubjectBuffer(packet.Topic.Length);
        if (MqttTopics.TryTopicToSubject(packet.Topic, buffer, out var length) != MqttTopicError.None)
        {
            return MqttFatal("characters ' ' and '.' not supported for MQTT topics", "Protocol Violation");
        }

        var subject = new ReadOnlySpan<byte>(buffer, 0, length);
        if (_permissions is null || _permissions.CanPublish(subject))
        {
            if (packet.Retain)
            {
                Retain(subject, packet.Topic, packet.Payload, qos);
            }

            RouteFromMqtt(subject, qos, packet.Payload);
        }

        if (qos == 1)
        {
            WriteAck(0x40, packet.PacketId); // PUBACK, also after a permission violation, as nats-server
        }

        return MqttStep.Continue;
    }

    private void RouteFromMqtt(ReadOnlySpan<byte> subject, byte qos, in ReadOnlySequence<byte> payload)
    {
        var mqtt = _mqtt!;
        var message = mqtt.NatsMessage(qos, payload);
        mqtt.InboundQoS = qos;
        try
        {
            ProcessPublish(subject, subject, default, MqttConnectionState.NatsHeaderLength, message);
        }
        finally
        {
            mqtt.InboundQoS = 0;
        }
    }

    private void Retain(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> topic, in ReadOnlySequence<byte> payload, byte qos)
    {
        var key = Encoding.UTF8.GetString(subject);
        if (payload.IsEmpty)
        {
            _broker.MqttRetained.Clear(key); // [MQTT-3.3.1-10]
        }
        else
        {
            _broker.MqttRetained.Set(new MqttRetainedMessage(key, topic.ToArray(), payload.ToArray(), qos)); // [MQTT-3.3.1-5]
        }
    }

    // SUBSCRIBE: one subscription per filter (two for "x/#": "x.>" and "x", as nats-server), a return
    // code per filter, SUBACK once they are in effect, then the retained messages they match.
    private MqttStep ProcessMqttSubscribe(in MqttPacket packet)
    {
        var filters = packet.TopicFilters;
        var codes = new byte[filters.Count];
        var retained = new List<(string Subject, byte QoS)>();
        var i = 0;
        foreach (var filter in filters)
        {
            var subject = FilterSubject(filter.Filter);
            if (subject is null || (_permissions is not null && !_permissions.CanSubscribe(subject)))
            {
                codes[i++] = 0x80; // failure [MQTT-3.9.3]
                continue;
            }

            // nats-server 2.9 grants QoS 1 for a QoS 2 request. [MQTT-3.9.3-1]: the granted QoS may be lower.
            var granted = Math.Min(filter.QoS, (byte)1);
            var sid = Encoding.UTF8.GetString(filter.Filter);
            AddMqttSubscription(sid, subject, granted);
            retained.Add((subject, granted));
            var subjectBytes = Encoding.UTF8.GetBytes(subject);
            if (MqttTopics.NeedsParentLevelSubscription(subjectBytes))
            {
                var parent = Encoding.UTF8.GetString(MqttTopics.ParentLevel(subjectBytes));
                AddMqttSubscription(sid + ParentLevelSidSuffix, parent, granted);
                retained.Add((parent, granted));
            }

            codes[i++] = granted;
        }

        _mqtt!.PendingAcks.Add(new MqttPendingAck(MqttPacketType.Subscribe, packet.PacketId, codes, retained));
        return MqttStep.SubscriptionsChanged;
    }

    // The sid of the second subscription a "x/#" filter makes, on "x" (nats-server's mqttMultiLevelSidSuffix).
    private const string ParentLevelSidSuffix = " fwc";

    private MqttStep ProcessMqttUnsubscribe(in MqttPacket packet)
    {
        foreach (var filter in packet.TopicFilters)
        {
            var sid = Encoding.UTF8.GetString(filter.Filter);
            RemoveMqttSubscription(sid);
            RemoveMqttSubscription(sid + ParentLevelSidSuffix);
        }

        _mqtt!.PendingAcks.Add(new MqttPendingAck(MqttPacketType.Unsubscribe, packet.PacketId, [], []));
        return MqttStep.SubscriptionsChanged;
    }

    private static string? FilterSubject(ReadOnlySpan<byte> filter)
    {
        var buffer = new byte[MqttTopics.MaxSubjectLength(filter.Length)];
        if (MqttTopics.TryFilterToSubject(filter, buffer, out var length) != MqttTopicError.None)
        {
            return null;
        }

        var subject = buffer.AsSpan(0, length);
        return SubjectRules.IsValidSubject(subject) ? Encoding.UTF8.GetString(subject) : null;
    }

    // A SUBSCRIBE repeating a filter replaces its subscription. [MQTT-3.8.4-3]
    private void AddMqttSubscription(string sid, string subject, byte qos)
    {
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        var sub = new Subscription(this, subject, null, Encoding.UTF8.GetBytes(sid), _broker.Space.ShardForSubscription(subjectBytes)) { MqttQoS = qos };
        Subscription? replaced;
        lock (_subsLock)
        {
            _subs.Remove(sid, out replaced);
            _subs.Add(sid, sub);
        }

        if (replaced is not null)
        {
            _pendingChanges.Add(new SubChange(replaced, Add: false));
        }

        _pendingChanges.Add(new SubChange(sub, Add: true));
    }

    private void RemoveMqttSubscription(string sid)
    {
        Subscription? removed;
        lock (_subsLock)
        {
            _subs.Remove(sid, out removed);
        }

        if (removed is not null)
        {
            _pendingChanges.Add(new SubChange(removed, Add: false));
        }
    }

    // After the routers applied the changes: SUBACK/UNSUBACK in order, each SUBACK followed by the
    // retained messages its filters match. [MQTT-3.3.1-6]
    private void WriteMqttAcks()
    {
        var mqtt = _mqtt!;
        var output = new ArrayBufferWriter<byte>();
        foreach (var ack in mqtt.PendingAcks)
        {
            output.ResetWrittenCount();
            if (ack.Type == MqttPacketType.Unsubscribe)
            {
                MqttPacketWriter.WriteUnsubAck(output, ack.PacketId); // [MQTT-3.10.4-4]
                WriteOwn(output.WrittenSpan);
                continue;
            }

            MqttPacketWriter.WriteSubAck(output, ack.PacketId, ack.ReturnCodes);
            WriteOwn(output.WrittenSpan);
            foreach (var (subject, granted) in ack.RetainedFor)
            {
                foreach (var message in _broker.MqttRetained.Matching(subject))
                {
                    var payload = new ReadOnlySequence<byte>(message.Payload);
                    if (Math.Min(message.QoS, granted) > 0)
                    {
                        mqtt.Inflight.Send(message.Topic, payload, retain: true);
                        continue;
                    }

                    output.ResetWrittenCount();
                    MqttPacketWriter.WritePublish(output, message.Topic, payload, 0, retain: true, dup: false, 0);
                    WriteOwn(output.WrittenSpan);
                }
            }
        }

        mqtt.PendingAcks.Clear();
    }

    /// <summary>Sends again, with DUP, the QoS 1 deliveries unacknowledged for <paramref name="ackWait"/> (the connection actor's tick).</summary>
    public void RedeliverMqtt(TimeSpan ackWait)
    {
        if (_mqtt is { } mqtt && mqtt.Inflight.RedeliverExpired(ackWait) > 0)
        {
            Outbound.Signal();
        }
    }

    /// <summary>
    /// Delivers one message to this MQTT client as a PUBLISH, on the publisher's thread: the subject
    /// mapped back to a topic, NATS headers left out, QoS the lower of the publisher's and the
    /// subscription's. Allocates nothing.
    /// </summary>
    private bool WriteMqttDelivery(Subscription sub, ReadOnlySpan<byte> subject, int headerSize, in ReadOnlySequence<byte> payload, byte publisherQoS)
    {
        var body = headerSize > 0 ? payload.Slice(headerSize) : payload;
        var qos = Math.Min(publisherQoS, sub.MqttQoS);
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
                return _mqtt!.Inflight.Send(topic, body, retain: false); // kept until PUBACK
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

    // The will goes out when the connection ends without DISCONNECT. [MQTT-3.1.2-8]
    private void PublishWill()
    {
        var mqtt = _mqtt!;
        if (mqtt.Will is not { } will || !mqtt.Connected)
        {
            return;
        }

        mqtt.Will = null;
        if (_permissions is not null && !_permissions.CanPublish(will.Subject))
        {
            return;
        }

        var payload = new ReadOnlySequence<byte>(will.Payload);
        if (will.Retain)
        {
            Retain(will.Subject, will.Topic, payload, will.QoS);
        }

        RouteFromMqtt(will.Subject, will.QoS, payload);
        FlushTouched();
    }

    private void WriteConnAck(MqttConnectReturnCode code, bool sessionPresent)
    {
        // CONNACK: 0x20 0x02 session-present return-code. [MQTT-3.2]
        ReadOnlySpan<byte> frame = [0x20, 0x02, sessionPresent && code == MqttConnectReturnCode.Accepted ? (byte)1 : (byte)0, (byte)code];
        WriteOwn(frame);
    }

    private void WriteAck(byte first, ushort packetId)
    {
        ReadOnlySpan<byte> frame = [first, 0x02, (byte)(packetId >> 8), (byte)packetId];
        WriteOwn(frame);
    }

    // nats-server assigns a NUID; any unique UTF-8 string will do. [MQTT-3.1.3-6]
    private static string NewMqttClientId() => "courier-" + Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(11));
}
