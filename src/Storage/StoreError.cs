namespace Courier.Storage;

/// <summary>Why a store refused an append or an operation (nats-server's store errors).</summary>
public enum StoreError
{
    /// <summary>Success.</summary>
    None = 0,

    /// <summary>The store was stopped (<c>ErrStoreClosed</c>).</summary>
    Closed,

    /// <summary>Discard new and the stream is at max_msgs (<c>ErrMaxMsgs</c>).</summary>
    MaxMsgs,

    /// <summary>Discard new and the message would take the stream over max_bytes (<c>ErrMaxBytes</c>).</summary>
    MaxBytes,

    /// <summary>Discard new per subject and the subject is at max_msgs_per_subject (<c>ErrMaxMsgsPerSubject</c>).</summary>
    MaxMsgsPerSubject,

    /// <summary>Headers + payload exceed max_msg_size, or the record cannot be stored (<c>ErrMsgTooLarge</c>).</summary>
    MessageTooLarge,

    /// <summary>The subject is empty or longer than 65,535 bytes.</summary>
    InvalidSubject,

    /// <summary>The sequence is not a stored message (<c>ErrInvalidSequence</c>).</summary>
    InvalidSequence,

    /// <summary>An earlier write or fsync failed; the store accepts nothing more until it is reopened.</summary>
    WriteFailed,
}

/// <summary>nats-server's texts for <see cref="StoreError"/>.</summary>
public static class StoreErrorText
{
    /// <summary>The error string nats-server uses for the same condition.</summary>
    public static string Describe(this StoreError error) => error switch
    {
        StoreError.None => "",
        StoreError.Closed => "store is closed",
        StoreError.MaxMsgs => "maximum messages exceeded",
        StoreError.MaxBytes => "maximum bytes exceeded",
        StoreError.MaxMsgsPerSubject => "maximum messages per subject exceeded",
        StoreError.MessageTooLarge => "message size exceeds maximum allowed",
        StoreError.InvalidSubject => "invalid subject",
        StoreError.InvalidSequence => "invalid sequence",
        StoreError.WriteFailed => "store write failed",
        _ => error.ToString(),
    };
}
