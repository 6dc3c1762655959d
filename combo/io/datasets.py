"""The public data sets combo can fetch: what a data set is (its files, each pinned by SHA-256, and where
they come from), the status of a copy, and the catalogue :data:`DATASETS`; :mod:`combo.io.fetch` downloads,
verifies and lists them and gives these names too."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Dict, List, Mapping, Optional, Tuple, Union

from ..errors import OptionError

__all__ = ["DATASETS", "DataFile", "Dataset", "DatasetStatus", "FileStatus", "Source", "get_dataset"]


# -- catalogue types -----------------------------------------------------------


@dataclass(frozen=True)
class DataFile:
    """One file of a data set, at ``path`` (POSIX, relative to the data home).

    ``sha256`` pins the whole file. ``members`` pins the members of a zip file
    that is kept packed (NLTK reads ``wordnet.zip`` as is): the zip itself may
    be re-packed upstream, its content may not. ``member`` is the path suffix
    of the archive member that holds the file; by default the file's path
    below the data set's folder.
    """

    path: str
    sha256: Optional[str] = None
    members: Optional[Mapping[str, str]] = None
    member: Optional[str] = None


@dataclass(frozen=True)
class Source:
    """One upstream download: mirror URLs tried in order, and the files it yields.

    ``archive`` is None when the download is the file itself, else ``"zip"`` or
    ``"tar"`` (any compression). ``sha256`` pins the download itself when known;
    for archives it is not (upstream archives are not stored offline), so their
    unpacked members are pinned instead.
    """

    urls: Tuple[str, ...]
    files: Tuple[DataFile, ...]
    archive: Optional[str] = None
    sha256: Optional[str] = None


@dataclass(frozen=True)
class Dataset:
    """A public data set: where it comes from, its licence and its pinned files."""

    name: str
    title: str
    folder: str  # top-level folder under the data home
    homepage: str
    licence: str
    citation: str
    sources: Tuple[Source, ...]
    notes: str = ""

    @property
    def files(self) -> List[DataFile]:
        return [f for src in self.sources for f in src.files]

    def member_suffix(self, f: DataFile) -> str:
        """Path suffix identifying ``f`` inside an upstream archive."""
        if f.member:
            return f.member
        parts = PurePosixPath(f.path).parts
        return "/".join(parts[1:]) if parts and parts[0] == self.folder and len(parts) > 1 else f.path


# -- status types --------------------------------------------------------------


@dataclass
class FileStatus:
    """Verification result of one file: ``state`` is ``ok``, ``missing`` or ``mismatch``."""

    path: Path
    state: str
    expected: Optional[str] = None
    actual: Optional[str] = None
    member: Optional[str] = None  # the zip member that failed, for packed zips

    @property
    def ok(self) -> bool:
        return self.state == "ok"


@dataclass
class DatasetStatus:
    """Verification result of a data set under one data home."""

    name: str
    root: Path
    files: List[FileStatus] = field(default_factory=list)

    @property
    def present(self) -> bool:
        """Every file exists (whatever its content)."""
        return all(f.state != "missing" for f in self.files)

    @property
    def verified(self) -> bool:
        """Every file exists and matches its pinned SHA-256."""
        return all(f.ok for f in self.files)

    @property
    def missing(self) -> List[FileStatus]:
        return [f for f in self.files if f.state == "missing"]

    @property
    def corrupt(self) -> List[FileStatus]:
        return [f for f in self.files if f.state == "mismatch"]

    @property
    def state(self) -> str:
        """``verified``, ``corrupt`` (some file fails its hash), ``partial`` or ``absent``."""
        if self.verified:
            return "verified"
        if self.corrupt:
            return "corrupt"
        return "absent" if len(self.missing) == len(self.files) else "partial"


# -- catalogue -------------------------------------------------------------------
# Hashes computed from the project's shared copies of the upstream files.

_STATMT = ("https://www.statmt.org/wmt12/", "http://www.statmt.org/wmt12/")
_WMT12_LANGS = ("cs", "de", "en", "es", "fr")
_WMT12_TEXTS = {  # newstest2012 is multi-parallel: source and reference of a language are one text
    "cs": "d296aa94baf1d0e6399e4be984e31fb63799900993e353a725601efab21a1120",
    "de": "048e911ec456bdf53ddfc9afe39f7539a3d06bcf9693294d0a1b857a35979817",
    "en": "d8c934066147810ce6093a1db057da0e91e5010cb7788ca997c038690a881275",
    "es": "ddc3396834939ee8685b8725bc1d9191d2365218bc6ad99574e0be343304efaa",
    "fr": "f79e2504df6a1179f718f1279990b09559d4e4ca120bd4430e9ee452be53b2a4",
}
_WMT12_OUTPUTS = {  # language pair -> system -> SHA-256 of newstest2012.<lp>.<system>
    "cs-en": {
        "cu-bojar": "e4123744a9adf60bb2493ffe0ff747f0e6ceca12655ee9a1a2d2c289a5778b01",
        "jhu-heiro": "ab775210e8569b01eef40042193fd28ad40257f79e31ad0255e1fa3138033861",
        "onlineA": "dbc4cc8e0c9028a5054393c69fc5d0f52a3faa5bdee87752b668751746d00b28",
        "onlineB": "f7211490aa04a870eed3565b76864785d3376f408858419211d258272cc748f9",
        "uedin-wmt12": "4ea5e43a2d5bcc82a37c23902414ff63119730727a004ddcdf16f9c29b1d27a3",
        "uk-dan-moses": "f4a9e1089df574917dbdc634c18462329b81b611e3edeba43d1668e21fd7c3d2",
    },
    "de-en": {
        "dfki-berlin": "436ee71fa0c7f1522dd52900e42a7cbedc67fce058dd718f45178607f0d31265",
        "jhu-hiero": "dd16c6c318e4f0051372c6d3fe32f0228fd8b447ffe792cbae84ec4129a62414",
        "KIT_Phrase-Based_SMT_System": "1ee4e31969e6978c75da83fb7252de7937c995da31224226513d22106b08a323",
        "LIMSI-Ncode-Constrained-Primary": "ea0e104a1aea790509b5b4d2cb1dff894a407be3d8394accc330976bc3650175",
        "onlineA": "cdd56a84f393319abcbf10a28e0299be5295c0784f227aba0bbf07aed3553239",
        "onlineB": "b04c530d83c3bc6ebb0a744d6b2aec44acea61357f9343ee4c5fef35de659acc",
        "onlineC": "37d7cccb6763e876df593b59388acc5599a6e950f2d58ec0b69a863846691ffd",
        "onlineD": "fccad4e0d4ad1b12573848dffbfa55cd6c1ee4ceef5f035f198b1cc0ac705927",
        "onlineE": "2b9e783aa97b530a3b012707ba74aa704a8b677218014a52299d05a294291990",
        "onlineF": "7a7d85c4e586f99af6e3c8651f78658f0b086b1d2d596849a97175b6dbe02815",
        "QCRI--primary": "5e5c945dfb3805ece92b1e6d704e4bdd80d9a7fc10bf2075a2541dbb982c0f74",
        "quaero_primary": "937633491187d31a349ad77b4e3d2a6fb177a0a358ee83dc5d99bef72a48e347",
        "RWTH_primary": "bd91a3fbcaed28052483f01d5ed634b1bdd354bdc46f797257d9a8a38b8986b2",
        "uedin-wmt12": "61b2e87ae8571961d9f9d9c857d4fe98d691b84f512e386a6378edfd5918a7fa",
        "UG-WMT12": "9a45e287337b1c664a65483be9e1870043cda5370d42b4731adc737117a10a0d",
        "uk-dan-moses": "e10c8a8410026f298a87d9086286df9d55cc59f2c23ab190ee3418d3d821544b",
    },
    "en-cs": {
        "commercial2": "046a83764e7b421766b98ca749ce1b97c846513492c93b24797cbd731ad0afaf",
        "cu-bojar_2012": "69ec21004a05c0557df6e7da19ce40e3219420e50b550b51eb5a0fb211cb3318",
        "cu-depfix": "edfe3527e4e04f96a2d6210e4d5dae3cf1eb7274c7d79e8ad723b33e922b6390",
        "cu-poor-comb": "e0ac91598d9824cd58ec64bfe209ea0f9aa312909ef4d4b44e61d694679fb07d",
        "cu-tamch-boj": "2af7bf7697442db6b66678d43e8a06e25f4d64424d8f40cb311c63c68438f690",
        "CU_TectoMT": "3fe559a9a070ff7274e1a95926a0772f78aba6836697160863e1bbe9420073f2",
        "jhu-hiero": "c708ddbb1cc36a2126dfc5a00d80cf3814f4b0178c507cded8e75945c3f585d8",
        "onlineA": "2c5a5734474d4778ec0e76e4341c8f6df0affa58d879ee9153058d14ac7c3ee1",
        "onlineB": "612cb80fcfa7c0acca893a25fad679927967b1f2183c0c4aaf0dd344de8b8bff",
        "pctrans2010": "7a17cb4c656719ca11fc60882aceb6a0b86fcc022bd912fc0c2086be168d40d7",
        "SFU": "18a5c72c9e4fe8ac1c3c263c937b8f8e0df757c84c8fb8aaf10529f9616f1492",
        "uedin-wmt12": "c5c6dca851d080fec9c3d9ee613ea0075dde60f59bbef3ba5df4f1279ffcb22a",
        "uk-dan-moses": "392c0422ae9f2a43d5f6b38c0303edcc6f6d3ad5fed4a7e6f75777d808187241",
    },
    "en-de": {
        "dfki-berlin": "5ad63a0c9cf205f483fea8ca4fe2ea234089e060f062277269961936a18d518c",
        "DFKI-hunsicker": "7a2a36f4b78ec833076d3bd86d0bc31f3ae881daf43d69cf21b10245d71d1122",
        "jhu-hiero": "3ad23398a05afa47164a6fd72f0e10c524c999860c1ae9c0e9a1c1113d021fb0",
        "KIT_Phrase-Based_SMT_System": "ca3b861d2dd58da6ad4730a2b04b6302d93d16f79a726df4f2b61386218ff1e0",
        "LIMSI-Ncode-Constrained-Primary": "f1d10530333cd9898dd3d8b11d9951bbfe9f96946faad3fd60b6ebbc837060ab",
        "onlineA": "8a238b9879e038db9867643e9eb87713550af007ba478e2c4d60c459cba8aa9a",
        "onlineB": "4f20fc251ab62c999be9e1ce6e1655d0ec9223aff5eb9a8052411a851e187375",
        "onlineC": "6f4bb8ace792fb58206465661d5c1b11d94ecd0f0bba14ae3d5f9b91c5a50280",
        "onlineD": "24893add3e3c859337b6c95b2eb589495cb6a87e56574f8d4b40926209e9fe46",
        "onlineE": "55521e5a75795c627aac5c8e2165cbbd3ffa682bc2db35c59df1af33cf9c9cea",
        "onlineF": "574acadefabec3c59da05b9ba1c5ce698d151b088b5ddd9013a6fc0a064d1bbb",
        "rwth-primary": "bc75518d21c5337610faeedae0aa6ba370d317479e0e242852378512a482337d",
        "uedin-williams": "5f2dcbc30485c4ee6e97e523c49ddb626c9a7cc5dee08cc2f9f6233e39d969d6",
        "uedin-wmt12": "601edb1e4ebc3d4ca96ebedaf03bbe479f353e4f1f362f5249bdec19cb157b53",
        "uk-dan-moses": "7ec2a557448cdddedd30717de9b74d9b6fa3133b4bd13e01a6b55ae286617ff9",
    },
    "en-es": {
        "jhu-hiero": "47ea24158bcddfcb6ce0359e98e3699b0fd8ac16e0c4a9279110046c92915082",
        "onlineA": "3151a06ce82e1db08782f88e7cda4a6585a36c48547aaa37fa0301c325e95182",
        "onlineB": "371a2d09763272430b9d1b1d6b929f0f774f367e60949b653b56232370631d83",
        "onlineC": "3a882b7cd0103347e9f5cfc29fa1831b59809ccfe56f55dcd7b5c3b17bc7e8f8",
        "onlineD": "c2f3192e2b5336c7d83ecefad63a3c1bb4702152aa45f6b38f2306d9494ea2ba",
        "onlineE": "4ff58895bc081532e60d66f11435eed31fd5e1243392c92bf20d3aee750bebae",
        "onlineF": "902baaf6110a40fa9a8fc213dc70abad78b600b05f9f4610c87690e67c00872b",
        "PROMT_DeepHybrid": "5af27a75bf02dcc2bc1057b859317ad0b909f5f91f62068f8eca208eca3fc783",
        "uedin-wmt12": "c2bd40530eeedadf0542076e810e0ff686f5fc3282d5c0b7c920700e564805aa",
        "uk-dan-moses": "380e2da365349a10fe25813fbcc36c1128c08bfd9a5640a354e69b8dea65958e",
        "UPC": "65088af1fbc1b132fcc66f9ae5a3eff8046a4e52706b89f852fbfbffcf549e04",
    },
    "en-fr": {
        "Its-LATL": "9f3363082e7e15b2e873abe9f5978778acc8f62badd4cfbec5c4c346fa63563e",
        "jhu-hiero": "ad5ecc8d1f17222290765ebc0be7a1efd9a18f4f6d467abcac70c60c730d1c0b",
        "KIT_Phrase-Based_SMT_System": "87902705cf4b47293aaa641286d8dbc471add3212598c6d0f6117a51f5ed0911",
        "LIMSI-Ncode-Constrained-Primary": "d628905dcd221d227f96c09a16b8912fce125fbf32436b584c3edcc5ddb513ee",
        "LIUM_EN-FR_12": "3f636f52cd10a3b7fb8cf7df2e3408fdc00725d037900c84ea363de60bc10024",
        "onlineA": "1c7df69a348a0e278d0ee5ecf5c548916cef96fe26953246ec2b70ba4b3793d5",
        "onlineB": "731fa22dd6d5bbd77de66b8fc6f748c506f4e36120e4a141e79734b03d55da15",
        "onlineC": "2a4005fdaf59e670aabbc38a842498ea0686885f76a44d15a6ff682d8615ebb4",
        "onlineD": "4eb7e9acbd60357102e23b82394cd9525d01785446e841b09468aa20c3cad426",
        "onlineE": "aa01f67a9fd8afba4d4fde92a6316216583fac981bcbe6b2911f67c8fe41d35d",
        "onlineF": "4fc2761576ceb935f28e2cf4e11ff2f83e1a8f006a720b1a623bba3bc6bd755c",
        "PROMT_DeepHybrid": "22ee7c0777e322e6ea40328fd7d0f560ff77d51f4d4b0e57216aae2a8046d808",
        "RWTH-Jane2-HPBT-constrained": "f6fae20393dd89a9ba31d8251d27559137832e3d189c1cc8b639ef468965c7eb",
        "uedin-wmt12": "18bba7171e9e33403449963b899fe399a8d9a1193d9f012fb1746087daab3816",
        "uk-dan-moses": "b0e91d66d0d7d03c95b1b2ab3afc85cff501e2502ebfcae6f5acedb4562cfcbe",
    },
    "es-en": {
        "GTH-UPM": "7a862f15fc2b4a5e4144747dd860170c3a8e400c92853c3bc466f7c95585b657",
        "jhu-hiero": "f5683e9687d2e09ebb3465fe31ca1315bf0e6f334a518c09e104ed0fc35bc93e",
        "onlineA": "a03a3266926cd4ed655356d2fd1e4d618c775975bd29b0b977aeeb3bf1ce3adc",
        "onlineB": "3105ce1153be695de5580113c6bafea06cdd02f112816abded0513e9345fc881",
        "onlineC": "74d364a7c3c260e1eedba094e34d00b4853eeb51a66179ef3275d6dc895ad58b",
        "onlineD": "68ef0ad907628834336084dbc6b93472b39091c17aca0f434a4f7281b5c2994a",
        "onlineE": "7ba433a15409b5688b040393a82c45e99be03e627eeb7f469597dac0c27701db",
        "onlineF": "fb754ccea801246e1693405a4d7d3bdf0cab13eea602a005414b23ae33b787a8",
        "QCRI--primary": "011b4ccbe987f621718a3496f3a8bd95a1e42d72e072914090d513fb0a79a0bc",
        "uedin-wmt12": "3e0c85777e30325d1c61790fceed28e0a42dd38098e851f35dd3ca36c889c281",
        "uk-dan-moses": "6ed70f79cd025f9299c146af2d5be40a538e1c4dc3e0ea37f7b69962d21b40ad",
        "UPC": "cc9ee1a135f8852b62dc0c447956c901fe78a91e2df69816fa4e15cbcdaf0f55",
    },
    "fr-en": {
        "cmu-avenue": "7ee228f87dd21ff14344d7c380b8ce17858fac6fe9b3e328f733bb5f40da95f0",
        "jhu-hiero": "7c65a2bb50d79b3231c8221848fc8b76c4c0a94e6bf99ce164df66d2a62beecc",
        "KIT_Phrase-Based_SMT_System": "dab8d2c32a8bf99c1786721751a9d7b536c9a4133efa33436e27bf7ab745d479",
        "LIMSI-Ncode-Constrained-Primary": "5aec69a8d5dd725bfca522eadc649ff2c3a5d1a07d9ba47ba942eee9d6d11f00",
        "LIUM_FR-EN_12": "b3328e52bab4912c9cbf576de9e602be494783576183bc33e7550491e515492f",
        "onlineA": "7981ebf75ca681c6e181d32a022238290c609a3e78dcfe9111ceaa719491821e",
        "onlineB": "91331e3f0351cf076f7853e1419216fd028984905ffacbd3d399c29f18bfe732",
        "onlineC": "7ba1065f24bc4f0023fb4dc53c3e85a7248aa60c80574640263916548f8f70dd",
        "onlineD": "76f29aa57fe67143bbc172897f06b2da55bb9f456de629d8f806d84c65d7dbc6",
        "onlineE": "9b5130f15b961eb549f5a31710cc7efc8312ccabb6307a67c79f5498fc29a4a2",
        "onlineF": "62c5312b03840a432859add0d168f25c21b7d25366df9ecaec0c60e74e4e17cd",
        "RWTH-PBT-constrained": "ae63bb3e10125a2adf73798c10ac34ae8430bede0665daedac91c1ab46b14ed5",
        "SFU_-_Kriya": "d6b14a063ecb842ac9fc44768bc565ab1b75cc7e933b8f16caefc05b48cf06fa",
        "uedin-wmt12": "684eaa11636efa546e1c5709e7b1bee6079fc46eb66cbfa12cb82d601e8cea57",
        "uk-dan-moses": "f5a85c4b8eb05ad9a74288b340bcebf3e0ac4680decf3dec8f115575a13dbf31",
    },
}


def _wmt12_plain_files() -> Tuple[DataFile, ...]:
    files = []
    for lang in _WMT12_LANGS:
        files.append(DataFile(f"wmt12/plain/sources/newstest2012-src.{lang}", _WMT12_TEXTS[lang]))
        files.append(DataFile(f"wmt12/plain/references/newstest2012-ref.{lang}", _WMT12_TEXTS[lang]))
    for pair, systems in _WMT12_OUTPUTS.items():
        for system, digest in systems.items():
            files.append(DataFile(
                f"wmt12/plain/system-outputs/newstest2012/{pair}/newstest2012.{pair}.{system}", digest))
    return tuple(files)


_DSTC7_RAW = ("https://github.com/mgalley/DSTC7-End-to-End-Conversation-Modeling/raw/master/evaluation/",
              "https://raw.githubusercontent.com/mgalley/DSTC7-End-to-End-Conversation-Modeling/master/evaluation/")
_MUTT_RAW = ("https://raw.githubusercontent.com/text-machine-lab/MUTT/master/corruptions/",
             "https://github.com/text-machine-lab/MUTT/raw/master/corruptions/")
_MUTT_FILES = {
    "det_sub": "8b6af2949b1ddf8a41936d3235e1c62e90c395b674b161c1b4e193a93c40365c",
    "near_syms": "d78584a173485507573e28f26e8acc237f3d3adc77403a2371bdc555bd3165d8",
    "neg_subj": "55c7967b1ad02982c2e35b1095e40a7bfb123c6dfcad5504682ebc9c9232396e",
    "neg_verb": "bedded5bded91d81d9cdcd53fc094e9692e5d64c82177a41704d6acffd85e2e2",
    "passive": "bbdabc2c232ae1ce4e5b04c22564c34e61a63b7e58ba2eb3e2b7029e6c20d51f",
    "sem_opps": "d3d442095914cd34d18b4b98e1e3c541788ea2cad75e020717e88d8e7933cfc7",
    "shuffled": "26c1af24d59936f14f4c3fc362d1866a2317bd2624fda1dead6ed0f23281ccb3",
}
_WORDNET_MEMBERS = {  # WordNet 3.0 database files inside NLTK's wordnet.zip
    "wordnet/adj.exc": "8824cc24bbedd797b9702316b27f07cd4c2b76b629539f0a1276f03926758016",
    "wordnet/adv.exc": "e7291461b629abfe63301bbe1998cee09fd575ed7107abd7ea9763adb05bf0a8",
    "wordnet/cntlist": "2694cf6c60234cb5b997c5d02ce50663a73b3ad204afc59644d32451dd24fbf2",
    "wordnet/cntlist.rev": "a198580b8f705fa02797bba8b13e5cbe4a9f9f40cb1697e774c7fc6a5865b035",
    "wordnet/data.adj": "c89120dfc1f046ddff4a631bf9b7e9fa1a36b5e86565a23bf82dbe14f30b88a7",
    "wordnet/data.adv": "444a63bf3955080ab7524f5079cfc07ff9bc682cb98bdb1db73b0fb9829f1139",
    "wordnet/data.noun": "fea17d2f9656611334eac790e5d69e47645fa180c4aa481fb4cd9b3520754ca2",
    "wordnet/data.verb": "adcf43e35b581e8036d8b5a52d63d9cd3d3b4870b2720d3c03c799df44777bc2",
    "wordnet/frames.vrb": "e7edc9055e1fafb77622e1df54cb22da82bf5853527687c2b1409acd9c0dc49b",
    "wordnet/index.adj": "c9865d7b4d1f805bdef82ccdcea5282436e23083e6f6f1b33e716327c4eda810",
    "wordnet/index.adv": "6f5465ed5758fe9c8a2f7ec17b1300f3aa875756c70ff7cba162f7e71bcf88ea",
    "wordnet/index.noun": "a490d99d93d017bf4822fe2f0ffa51fd73911ce271dc7535fade21f8814b5a04",
    "wordnet/index.sense": "ce997000ec806318ff1dfadf77d314ac527358e127d7bbe3d1f4e83a1c5c1c2b",
    "wordnet/index.verb": "e2ac24816c3a8289dcb72aaa9cf8db81fdf25ec34d792bfc96ac5b7a20c8b4ae",
    "wordnet/lexnames": "895f40b9eca707c5b1c01897e9a6f3de48ab9214f354235fe718e016e9bab1d1",
    "wordnet/noun.exc": "2b5d675c380b39ecf595af9fa9d4e7feb1d58c643b0bff08c40ed5bfe41fab7a",
    "wordnet/sentidx.vrb": "129e267389fe88ea413b90addda3fcfb2a42b009339298b60711676b2b5d9bf0",
    "wordnet/sents.vrb": "6fb59507c96c4aeb267e016ce4a654a1791a438815de98c52e7975df20db15c9",
    "wordnet/verb.exc": "dbbcf9a601b2d77e934e413b91d90e88ec7f933a8b77cfc00602a923b891b42c",
}
_NLTK_RAW = ("https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/",
             "https://github.com/nltk/nltk_data/raw/gh-pages/packages/corpora/")


# One declaration per data set: the records share a shape, not content (URLs, files and hashes differ).
DATASETS: Dict[str, Dataset] = {d.name: d for d in (
    Dataset(
        name="wmt12",
        title="WMT12 news translation: newstest2012 plain test set, system outputs and manual rankings",
        folder="wmt12",
        homepage="https://www.statmt.org/wmt12/results.html",
        licence="research use, as distributed by statmt.org (WMT12)",
        citation="Callison-Burch et al. (2012). Findings of the 2012 Workshop on Statistical Machine "
                 "Translation. WMT 2012.",
        sources=(
            Source(urls=tuple(u + "manual-eval-judgments-2012.tgz" for u in _STATMT), archive="tar", files=(
                DataFile("wmt12/wmt12.RNK_results.csv",
                         "6e3380d1ae571652a66ca6785ec2eb699a55df4c83d899f0ff9267727796d62d"),
                DataFile("wmt12/README.txt",
                         "7afc0b2309e2205876f1f2e4904ada50ca6d134a5f1f4f3a6d091a5d601aed74"),
            )),
            Source(urls=tuple(u + "wmt12-data.tar.gz" for u in _STATMT), archive="tar",
                   files=_wmt12_plain_files()),
        ),
        notes="Two archives; only the plain-text files listed here are kept (the SGML copies are skipped).",
    ),
    Dataset(
        name="flickr8k",
        title="Flickr8k captions, splits, expert and CrowdFlower judgments (no images)",
        folder="flickr8k",
        homepage="http://hockenmaier.cs.illinois.edu/8k-pictures.html",
        licence="research use (Hodosh, Young and Hockenmaier 2013)",
        citation="Hodosh, Young and Hockenmaier (2013). Framing Image Description as a Ranking Task: "
                 "Data, Models and Evaluation Metrics. JAIR 47, 853-899.",
        sources=(
            Source(urls=(
                "http://nlp.cs.illinois.edu/HockenmaierGroup/Framing_Image_Description/Flickr8k_text.zip",
                "https://github.com/jbrownlee/Datasets/releases/download/Flickr8k/Flickr8k_text.zip",
            ), archive="zip", files=(
                DataFile("flickr8k/Flickr8k.token.txt",
                         "1e1f3a371ba1a1bf742e6930521c037e046b2bf3fcc2390ba8405e0301ed7689"),
                DataFile("flickr8k/ExpertAnnotations.txt",
                         "56c2b1a9e1a46ba73b8b151abd7c3c8b1676fbacadb559d0c2eb6524b166cf4f"),
                DataFile("flickr8k/CrowdFlowerAnnotations.txt",
                         "72a74aef443df4848fb1f3c23654ee9e0ca5b528198f68e2efedf11b6ca61260"),
                DataFile("flickr8k/Flickr_8k.trainImages.txt",
                         "e330ddd5156a4c2d2e2b67bc587e70e588f2d132bd8a10dc54dcb71e58115d8e"),
                DataFile("flickr8k/Flickr_8k.devImages.txt",
                         "18ba829f47f6df1cb830bf7f0506e2ddf333818925299babbd1bbcaf50fdc504"),
                DataFile("flickr8k/Flickr_8k.testImages.txt",
                         "c0924146c131458ceba45da59670fe9520eadce1e5cafffa16a817672a9b1f17"),
                DataFile("flickr8k/readme.txt",
                         "6152fc45ae9b629c4af9c8466e5ae608b80fbcb0f6316fef458dc160020a21a2"),
            )),
        ),
        notes="Flickr8k_text.zip from the authors' site, else the widely used GitHub mirror; "
              "the unpacked files are pinned, so either must give the same content.",
    ),
    Dataset(
        name="dstc7",
        title="DSTC7 Task 2 (grounded response generation): contexts, references, "
              "system responses and human evaluation",
        folder="dstc7",
        homepage="https://github.com/mgalley/DSTC7-End-to-End-Conversation-Modeling/tree/master/evaluation",
        licence="Open Use of Data Agreement v1.0 (O-UDA 1.0), dstc7/LICENSE.txt",
        citation="Galley et al. (2019). Grounded Response Generation Task at DSTC7. "
                 "AAAI 2019 DSTC7 workshop.",
        sources=(
            Source(urls=tuple(u + "dstc7-task2-human_eval.tgz" for u in _DSTC7_RAW), archive="tar", files=(
                DataFile("dstc7/dstc7-task2-context.tsv",
                         "a5df92e5a5d2d8ba1498a56dfc41ce89a6ec0ec68516b33c7c450c740f959dce"),
                DataFile("dstc7/dstc7-task2-gold_responses.tsv",
                         "f2d16c8faaba94655f2d7fdf3dfa1d8921d91af0330e6b64b22b4bbcac9553c5"),
                DataFile("dstc7/dstc7-task2-system_responses.tsv",
                         "94f79417c551375f9158fe0b23b1fba9d953336fed5747a650b3af6aae4e56f8"),
                DataFile("dstc7/dstc7-task2-human_evaluation.tsv",
                         "8fc5703d7d0dd65a74ad516a0a201493cfbd44fa5a15f9216cd02495a4dd627d"),
                DataFile("dstc7/dstc7-task2-human-eval-per-judge.tsv",
                         "86ebb4c361e2497ad1eec435672092d04a8b9779bf8131afd895b21030b28c1e"),
                DataFile("dstc7/README.txt",
                         "3eaf7a303f384c5b92b622f6723dcbbe636a19b016d62e51a4ba91f9e9db2738"),
            )),
            Source(urls=tuple(u + "LICENSE.txt" for u in _DSTC7_RAW),
                   sha256="994c1924ff75f01311c4541c3b7b2ce11841b7adf3d5bd4b18963f66d6f68dab", files=(
                DataFile("dstc7/LICENSE.txt",
                         "994c1924ff75f01311c4541c3b7b2ce11841b7adf3d5bd4b18963f66d6f68dab"),
            )),
        ),
    ),
    Dataset(
        name="sick",
        title="SICK sentence pairs with relatedness (1-5) and entailment labels",
        folder="sick",
        homepage="https://zenodo.org/record/2787612",
        licence="CC BY-NC-SA 3.0",
        citation="Marelli et al. (2014). A SICK cure for the evaluation of compositional distributional "
                 "semantic models. LREC 2014.",
        sources=(
            Source(urls=(
                "https://zenodo.org/record/2787612/files/SICK.zip?download=1",
                "http://clic.cimec.unitn.it/composes/materials/SICK.zip",
                "https://github.com/text-machine-lab/MUTT/raw/master/data/sick/SICK.zip",
            ), archive="zip", files=(
                DataFile("sick/SICK.txt", "336a65a94eb678515b61c402fce99f6babe9980b36a9d846c8edc871f330e002"),
                DataFile("sick/readme.txt", "beec0b18191a9bf5590c7e6de1b4aecac15c085e801377e17f631e441349e2ed"),
            )),
        ),
    ),
    Dataset(
        name="mutt",
        title="MUTT metric unit tests: original / corrupted sentence sets for 7 corruption types",
        folder="mutt",
        homepage="https://github.com/text-machine-lab/MUTT",
        licence="research code release (the repository states no licence)",
        citation="Boag, Kovalenko and Rumshisky (2016). MUTT: Metric Unit TesTing for Language "
                 "Generation Tasks. ACL 2016.",
        sources=tuple(
            Source(urls=tuple(u + f"{kind}.txt" for u in _MUTT_RAW), sha256=digest,
                   files=(DataFile(f"mutt/corruptions/{kind}.txt", digest),))
            for kind, digest in _MUTT_FILES.items()),
    ),
    Dataset(
        name="wordnet",
        title="WordNet 3.0 in NLTK's layout (nltk_data/corpora/wordnet.zip)",
        folder="nltk_data",
        homepage="https://wordnet.princeton.edu/",
        licence="WordNet 3.0 licence (Princeton University; permissive, notice must be kept)",
        citation="Miller (1995). WordNet: a lexical database for English. CACM 38(11). "
                 "Fellbaum (ed.) (1998). WordNet: An Electronic Lexical Database. MIT Press.",
        sources=(
            Source(urls=tuple(u + "wordnet.zip" for u in _NLTK_RAW), files=(
                DataFile("nltk_data/corpora/wordnet.zip", members=_WORDNET_MEMBERS),
            )),
        ),
        notes="Kept zipped, as NLTK reads it; the 19 database files inside are pinned, not the zip "
              "itself (re-packing changes a zip's bytes, not its content). Set NLTK_DATA=<home>/nltk_data.",
    ),
)}


def get_dataset(name: Union[str, Dataset]) -> Dataset:
    """The catalogue entry called ``name`` (a :class:`Dataset` passes through)."""
    if isinstance(name, Dataset):
        return name
    try:
        return DATASETS[name]
    except KeyError:
        raise OptionError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}") from None
