import { randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier, AttributeTypeAndValue, AttributeValue, BasicConstraints, Certificate, ExtendedKeyUsage, Extension, Extensions,
  GeneralName, id_ce_basicConstraints, id_ce_extKeyUsage, id_ce_keyUsage, id_ce_subjectAltName, id_kp_serverAuth, KeyUsage, KeyUsageFlags,
  Name, RelativeDistinguishedName, SubjectAlternativeName, SubjectPublicKeyInfo, TBSCertificate, Validity, Version,
} from '@peculiar/asn1-x509';

/**
 * Signature algorithm OIDs by key type: ML-DSA from FIPS 204 (NIST CSOR, no parameters, the
 * whole message is signed), ECDSA with SHA-256 from RFC 5758.
 */
const SIGNATURE_OIDS = new Map<string, { oid: string; digest: string | null }>([
  ['ml-dsa-44', { oid: '2.16.840.1.101.3.4.3.17', digest: null }],
  ['ml-dsa-65', { oid: '2.16.840.1.101.3.4.3.18', digest: null }],
  ['ml-dsa-87', { oid: '2.16.840.1.101.3.4.3.19', digest: null }],
  ['ec', { oid: '1.2.840.10045.4.3.2', digest: 'sha256' }],
]);
const COMMON_NAME_OID = '2.5.4.3';

export interface CertificateRequest {
  privateKey: KeyObject;
  publicKey: KeyObject;
  commonName: string;
  /** DNS names and IP literals the certificate is valid for. */
  names: readonly string[];
  notBefore: Date;
  notAfter: Date;
}

function extension(id: string, critical: boolean, value: object): Extension {
  return new Extension({ extnID: id, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

/**
 * A self-signed X.509 v3 server certificate in PEM. Node can make keys of every kind (ML-DSA
 * included) but has no API that writes a certificate, and OpenSSL's command line may be older
 * than the keys; so the DER is built here from @peculiar/asn1-x509's schema and signed with the
 * key itself.
 */
export function selfSignedCertificate(request: CertificateRequest): string {
  const keyType = request.privateKey.asymmetricKeyType ?? '';
  const algorithm = SIGNATURE_OIDS.get(keyType);
  if (algorithm === undefined) throw new Error(`no certificate signature algorithm for a ${keyType} key`);
  const signatureAlgorithm = new AlgorithmIdentifier({ algorithm: algorithm.oid });
  const name = new Name([
    new RelativeDistinguishedName([new AttributeTypeAndValue({ type: COMMON_NAME_OID, value: new AttributeValue({ utf8String: request.commonName }) })]),
  ]);
  const altNames = request.names.map((n) => (isIP(n) !== 0 ? new GeneralName({ iPAddress: n }) : new GeneralName({ dNSName: n })));
  // A positive serial of 16 octets (RFC 5280 §4.1.2.2: unique, at most 20). The top bit clear keeps
  // it positive and the next one set keeps DER from needing a leading zero octet: with only the
  // first, one serial in ~256 began 0x00 0x0?, which OpenSSL refuses as illegal padding.
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: new Uint8Array(serial).buffer,
    signature: signatureAlgorithm,
    issuer: name,
    validity: new Validity({ notBefore: request.notBefore, notAfter: request.notAfter }),
    subject: name,
    subjectPublicKeyInfo: AsnConvert.parse(request.publicKey.export({ format: 'der', type: 'spki' }), SubjectPublicKeyInfo),
    extensions: new Extensions([
      extension(id_ce_basicConstraints, true, new BasicConstraints({ cA: false })),
      extension(id_ce_keyUsage, true, new KeyUsage(KeyUsageFlags.digitalSignature)),
      extension(id_ce_extKeyUsage, false, new ExtendedKeyUsage([id_kp_serverAuth])),
      extension(id_ce_subjectAltName, false, new SubjectAlternativeName(altNames)),
    ]),
  });
  const signature = sign(algorithm.digest, Buffer.from(AsnConvert.serialize(tbs)), request.privateKey);
  const der = Buffer.from(AsnConvert.serialize(new Certificate({ tbsCertificate: tbs, signatureAlgorithm, signatureValue: new Uint8Array(signature).buffer })));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
